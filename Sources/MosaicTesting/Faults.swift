internal import Mosaic
internal import MosaicKernel

/// The error a harness injects when the test does not name one.
public struct InjectedFault: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where a fault was injected; new codes may be added.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The value as text.
        public let rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The value as text, for messages and logs.
        public var description: String { rawValue }

        /// A fault a test made itself.
        public static let injected = Code(rawValue: "injected")
        /// A module's `activate` threw it (``TestHarness/failActivation(of:with:)``).
        public static let activation = Code(rawValue: "activation")
        /// A service's resolution threw it (``TestHarness/failService(_:with:)``).
        public static let service = Code(rawValue: "service")
    }

    /// Where the fault was injected.
    public let code: Code
    /// The text the test gave, which the module's failure reason and the report then quote.
    public let description: String
    /// An error that reads as `description`, so a test can find it in a reason with `.failed(reason: "…")`.
    public init(_ description: String, code: Code = .injected) {
        self.code = code
        self.description = description
    }
}

/// How an injected module misbehaves when the kernel activates it.
enum ActivationFault: Sendable {
    /// `activate` throws this before the module's own code runs.
    case throwing(any Error)
    /// `activate` waits until the kernel gives up on it and cancels it.
    case hanging
}

extension ModuleFactory {
    /// This factory, with activation failing as `fault` says; everything the module declares is unchanged.
    func injecting(_ fault: ActivationFault) -> ModuleFactory {
        let make = self.make
        return ModuleFactory(manifest: manifest, register: register) { FaultyModule(wrapped: make(), fault: fault) }
    }
}

/// A module whose activation fails as told; deactivation still reaches the module it wraps.
struct FaultyModule: Module {
    static let manifest = Manifest(id: "mosaic.testing.faulty", version: "1.0.0")
    let wrapped: any Module
    let fault: ActivationFault?

    init() { self.init(wrapped: StandInModule(), fault: nil) }

    init(wrapped: any Module, fault: ActivationFault?) {
        self.wrapped = wrapped
        self.fault = fault
    }

    func activate(_ context: ActivationContext) async throws {
        switch fault {
        case .throwing(let error):
            throw error
        case .hanging:
            // A stream nobody finishes: iterating it ends only when the kernel cancels this task.
            let (never, continuation) = AsyncStream<Never>.makeStream()
            for await _ in never {}
            continuation.finish()  // used after the loop, so it lives until then
            try Task.checkCancellation()
        case nil:
            try await wrapped.activate(context)
        }
    }

    func deactivate() async {
        await wrapped.deactivate()
    }
}
