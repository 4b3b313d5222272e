/// Why a service could not be resolved.
public struct ServiceError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure; new codes may be added.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The value as text.
        public let rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The value as text, for messages and logs.
        public var description: String { rawValue }

        /// The resolving module did not declare the service, and does not provide it.
        public static let notDeclared = Code(rawValue: "not-declared")
        /// Nothing provides the service.
        public static let noProvider = Code(rawValue: "no-provider")
        /// The providing module is not active (never was, or was deactivated).
        public static let providerInactive = Code(rawValue: "provider-inactive")
        /// The service's factory threw.
        public static let factoryFailed = Code(rawValue: "factory-failed")
        /// The registration is a placeholder that the app was meant to replace.
        public static let unimplemented = Code(rawValue: "unimplemented")
        /// An `@Injected` value was created outside any module's code, so it has no services to resolve from.
        public static let outsideModule = Code(rawValue: "outside-module")
        /// The service's factory resolved the service it builds, directly or through other factories' resolves.
        public static let cycle = Code(rawValue: "cycle")
    }

    /// The kind of failure.
    public let code: Code
    /// The service.
    public let service: String
    /// The module that provides it, when known.
    public let provider: ModuleID?
    /// What happened and what to do.
    public let message: String
    /// The error a factory threw, for ``Code-swift.struct/factoryFailed``.
    public let underlying: (any Error)?

    /// An error of kind `code` about `service`, with what happened and what to do.
    public init(
        _ code: Code, service: String, provider: ModuleID? = nil, message: String, underlying: (any Error)? = nil
    ) {
        self.code = code
        self.service = service
        self.provider = provider
        self.message = message
        self.underlying = underlying
    }

    /// The value as text, for messages and logs.
    public var description: String { message }
}

/// A factory result for a service the composition root is meant to wire: resolving it fails with a message that
/// names the missing wiring, instead of running the wrong code.
///
/// ```swift
/// module.services.singleton((any Analytics).self, rank: .fallback) { try unimplemented("analytics") }
/// ```
public func unimplemented<T>(_ name: String, _ hint: String = "") throws(ServiceError) -> T {
    throw ServiceError(
        .unimplemented, service: name,
        message: "\(name) is not wired: its registration is a placeholder. "
            + (hint.isEmpty ? "Register a provider for it (rank .primary or .override) in the app." : hint))
}
