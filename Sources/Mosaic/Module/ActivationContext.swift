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

    /// Creates a context; the kernel and test harnesses do this, modules only read it.
    public init(id: ModuleID, version: SemanticVersion, host: HostEnvironment, logger: Logger) {
        self.id = id
        self.version = version
        self.host = host
        self.logger = logger
    }
}
