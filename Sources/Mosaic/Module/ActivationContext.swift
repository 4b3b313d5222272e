public import Logging

/// What the kernel hands a module when it activates.
public struct ActivationContext: Sendable {
    /// The module's identifier.
    public let id: ModuleID
    /// The module's version.
    public let version: SemanticVersion
    /// The host the module runs in.
    public let host: HostEnvironment
    /// A logger labelled with the module's identifier.
    public let logger: Logger
    /// The services the module may resolve: its own, those it declared it uses, and the host's.
    public let services: Services
    /// The host's standard, when it has one.
    public let standard: (any Standard)?
    /// Every module's contributions to the host's extension points, for a module that gathers them.
    public let contributions: Contributions
    /// The event bus, publishing as this module.
    public let events: Events
    /// Shared state, writing as this module.
    public let state: SharedState

    /// Creates a context; the kernel and test harnesses do this, modules only read it.
    public init(
        id: ModuleID, version: SemanticVersion, host: HostEnvironment, logger: Logger, services: Services,
        standard: (any Standard)? = nil, contributions: Contributions = Contributions(), events: Events? = nil,
        state: SharedState? = nil
    ) {
        self.id = id
        self.version = version
        self.host = host
        self.logger = logger
        self.services = services
        self.standard = standard
        self.contributions = contributions
        self.events = events ?? Events(bus: nil, module: id)
        self.state = state ?? SharedState(store: nil, module: id)
    }

    /// The host's standard as `type`, or `nil` when there is none or it does not conform; a module that declared
    /// the requirement with ``ModuleRegistrar/requireStandard(_:)`` always gets it.
    public func standard<S>(as type: S.Type) -> S? {
        standard as? S
    }
}
