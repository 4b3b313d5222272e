/// Collects everything a module declares before it runs.
///
/// - The kernel validates the declarations with every other module's before any module runs.
/// - What the kernel grants on them goes into the module's ledger once it starts; deactivation withdraws all of it.
public struct ModuleRegistrar: Sendable {
    /// The services the module provides and uses.
    public var services = ServiceRegistrar()
    /// When the module starts: at boot (the default), or on its first use.
    public var activation = Activation.atBoot
    /// What the module demands of the host's standard.
    package internal(set) var standardRequirements: [StandardRequirement] = []
    /// What it contributes to extension points.
    package internal(set) var contributions: [ContributionDeclaration] = []
    /// The work it runs in lifecycle phases.
    package internal(set) var participants: [PhaseParticipant] = []
    /// The host events it listens to.
    package internal(set) var listeners: [HostEventListener] = []
    /// The links it handles.
    package internal(set) var deeplinks: [DeeplinkHandler] = []
    /// The configuration keys the module reads (``configuration(_:)``).
    package internal(set) var configurationKeys: [AnyConfigurationKey] = []
    /// The events and shared state keys it says it publishes, subscribes to, writes and reads (declarations only).
    package internal(set) var interactions = ModuleInteractions()
    /// What cannot cross to the module's own process, when it runs in one (``remote(content:open:)``).
    package internal(set) var crossingProblems: [CrossingProblem] = []
    /// Whether the module's code runs in a process of its own (these are its declarations as the host keeps them).
    package internal(set) var runsInOwnProcess = false

    package init() {}

    /// When a module starts.
    public enum Activation: Sendable, Hashable {
        /// With the kernel: at boot, or as soon as it may run.
        case atBoot
        /// Validated and authorized with the others, then on standby until its first use starts it (with what it
        /// requires): a link it handles, the content of a contribution it makes (a tab shows without it), an event
        /// it declares it subscribes to, a module that requires it or uses its services starting, or
        /// `Kernel.start(_:)`. Back on standby after it is deactivated and may run again.
        case onDemand
    }
}
