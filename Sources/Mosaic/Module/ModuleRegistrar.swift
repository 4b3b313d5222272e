/// Everything a module declares before it runs: its ledger. Deactivation withdraws all of it.
public struct ModuleRegistrar: Sendable {
    /// The services the module provides and uses.
    public var services = ServiceRegistrar()
    /// What the module demands of the host's standard.
    public internal(set) var standardRequirements: [StandardRequirement] = []
    /// What it contributes to extension points.
    public internal(set) var contributions: [ContributionDeclaration] = []
    /// The work it runs in lifecycle phases.
    public internal(set) var participants: [PhaseParticipant] = []
    /// The host events it listens to.
    public internal(set) var listeners: [HostEventListener] = []
    /// The links it handles.
    public internal(set) var deeplinks: [DeeplinkHandler] = []
    /// The events and shared state keys it says it publishes, subscribes to, writes and reads (declarations only).
    public internal(set) var interactions = ModuleInteractions()

    public init() {}
}
