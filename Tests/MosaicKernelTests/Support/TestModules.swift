import Logging
import Mosaic
import MosaicKernel
import Synchronization

/// A module whose behaviour each test chooses.
struct Probe: Module {
    static let manifest = Manifest(id: "test.probe", version: "1.0.0")

    var onActivate: @Sendable (ActivationContext) async throws -> Void = { _ in }
    var onDeactivate: @Sendable () async -> Void = {}

    init() {}

    init(
        activate: @escaping @Sendable (ActivationContext) async throws -> Void,
        deactivate: @escaping @Sendable () async -> Void
    ) {
        onActivate = activate
        onDeactivate = deactivate
    }

    func activate(_ context: ActivationContext) async throws { try await onActivate(context) }
    func deactivate() async { await onDeactivate() }
}

struct ActivationError: Error, CustomStringConvertible {
    var description: String { "the database is unreachable" }
}

/// What a probe does when activated.
enum Behavior: Sendable {
    case succeed
    case fail
    /// Waits on the gate, ignoring cancellation, until a test opens it.
    case hang(Gate)
}

/// Records what modules did, in order, so tests can check orderings.
final class EventLog: Sendable {
    enum Event: Sendable, Hashable {
        case activationStarted(ModuleID)
        case activated(ModuleID)
        case deactivated(ModuleID)
    }

    private let events = Locked<[Event]>([])

    func record(_ event: Event) { events.withLock { $0.append(event) } }
    var all: [Event] { events.withLock { $0 } }

    /// The modules deactivated, in order.
    var deactivations: [ModuleID] {
        all.compactMap { if case .deactivated(let id) = $0 { id } else { nil } }
    }

    /// The modules activated, in the order their activation finished.
    var activations: [ModuleID] {
        all.compactMap { if case .activated(let id) = $0 { id } else { nil } }
    }

    func position(of event: Event) -> Int? { all.firstIndex(of: event) }
}

/// A latch that suspends callers, ignoring cancellation, until opened.
final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A factory for a probe with the given manifest and behaviour, logging into `log`.
func probe(
    _ id: ModuleID,
    version: SemanticVersion = "1.0.0",
    requires dependencies: [Dependency] = [],
    entitlements: Set<Entitlement> = [],
    compatibility: Compatibility = .any,
    behavior: Behavior = .succeed,
    log: EventLog? = nil
) -> ModuleFactory {
    let manifest = Manifest(
        id: id, version: version, requires: dependencies, entitlements: entitlements,
        compatibility: compatibility)
    return ModuleFactory(manifest: manifest) {
        Probe(
            activate: { _ in
                log?.record(.activationStarted(id))
                switch behavior {
                case .succeed: break
                case .fail: throw ActivationError()
                case .hang(let gate): await gate.wait()
                }
                log?.record(.activated(id))
            },
            deactivate: { log?.record(.deactivated(id)) })
    }
}

/// A catalog of factories, in order.
func catalog(_ factories: ModuleFactory...) -> ModuleCatalog {
    catalog(factories)
}

func catalog(_ factories: [ModuleFactory]) -> ModuleCatalog {
    var catalog = ModuleCatalog()
    for factory in factories { catalog.add(factory) }
    return catalog
}

let testHost = HostEnvironment(
    version: "2.3.0", platform: .linux, platformVersion: "6.1.0", features: ["location"], schemes: ["ghost"])

/// A kernel over `factories` for `testHost`, granting `entitlements`.
func makeKernel(
    _ factories: [ModuleFactory],
    entitlements: Set<Entitlement> = [],
    options: KernelOptions = KernelOptions()
) -> Kernel {
    Kernel(
        catalog: catalog(factories), host: testHost, entitlements: .granted(entitlements), options: options,
        logger: quietLogger)
}

/// A logger that keeps test output readable: thousands of kernels boot in these tests.
let quietLogger: Logger = {
    var logger = Logger(label: "test.kernel")
    logger.logLevel = .critical
    return logger
}()

extension Array where Element == Diagnostic {
    func with(_ code: Diagnostic.Code) -> [Diagnostic] { filter { $0.code == code } }
}
