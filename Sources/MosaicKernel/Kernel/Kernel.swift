public import Logging
public import Mosaic
internal import Tracing

/// The runtime: validates the module graph, authorizes, activates in dependency order, and keeps the modules in
/// the state the graph and the host's policy call for as both change.
///
/// ```swift
/// let kernel = Kernel(modules: [LocationModule.self, WeatherModule.self], host: HostEnvironment(version: "2.3.0"),
///                     entitlements: .granted(["weather", "sports"]))
/// let report = try await kernel.boot()
/// print(report.table)
/// ```
///
/// Operations that change the running set (``boot()``, ``grant(_:)``, ``revoke(_:)``, ``install(_:)-(Module.Type)``,
/// ``uninstall(_:dependents:)``, ``shutdown()``) run one at a time, in the order they were called; queries answer
/// at once, even while an operation is under way.
public actor Kernel {
    enum Status {
        case idle
        case running
        case shutDown
    }

    /// What the kernel holds for one module.
    struct Record {
        var lifecycle: Lifecycle = .start
        var instance: (any Module)?
        /// The context the module was last activated with; its handlers, participants and listeners get it too.
        var context: ActivationContext?
        /// What the kernel granted the module while it activates and is active; withdrawn as a whole.
        var ledger: ModuleLedger?
        var activationTime: Duration?
        /// Why the module was last activated (an install marks it before it activates).
        var cause: ActivationCause?
        /// How long the module's participants took in the last run of each phase.
        var phaseTimes: [LifecyclePhase: Duration] = [:]
        /// Whether a use asked for this on-demand module since it last stopped (``start(_:)``).
        var demanded = false

        /// Whether the module is active (what its dependents need before they activate).
        var isActive: Bool {
            if case .active = lifecycle { true } else { false }
        }
    }

    // MARK: What the host set up (fixed for the kernel's life)

    let host: HostEnvironment
    let options: KernelOptions
    /// The clock of every time limit, delay and timing (``KernelOptions/clock``).
    let clock: KernelClock
    let logger: Logger
    /// Where spans and metrics go (``KernelOptions/tracer``, ``KernelOptions/metricsFactory``).
    let telemetry: Telemetry
    /// The services the host itself registers, and its standard.
    let hostServices: ServiceRegistrar
    let standard: (any Standard)?
    /// The host and standard as every module's context holds them.
    let contextShared: ActivationContext.Shared
    /// The extension points the host declares beyond the built-in ones.
    let extensionPoints: [AnyExtensionPoint]

    // MARK: The module graph and the policy over it

    var status = Status.idle
    var catalog: ModuleCatalog
    var graph: ModuleGraph
    var policy: EntitlementPolicy
    /// The policy the host created the kernel with: with external storage, the default for undecided entitlements.
    let defaultPolicy: EntitlementPolicy
    var authorizationDiagnostics: [Diagnostic] = []
    /// How this instance follows the policy instances share: the watch on its changes, and how its reads went.
    var policyReads = StoredPolicyReads()
    /// The sweep that abandons the deliveries of durable handlers nothing runs any more.
    var strandedSweep: Task<Void, Never>?

    // MARK: Each module's life (a record per graph position; its grants live in the record's ledger)

    /// One record per module, at the module's position in ``graph``.
    var records: [Record] = []
    /// Modules that threw or hung while activating, with the reason; they stay failed until uninstalled.
    var failures: [ModuleID: String] = [:]
    /// The modules that run in a process of their own.
    let isolation: Isolation
    /// Modules on their way out through ``uninstall(_:dependents:)``.
    var leaving: Set<ModuleID> = []
    /// Modules a bisection holds off (``holdOff(_:)``), and the modules active before the first of them.
    var heldOff: Set<ModuleID> = []
    var activeBeforeHold: [ModuleID] = []
    var runtimeDiagnostics: [Diagnostic] = []
    var bootDuration: Duration = .zero
    /// What the operation under way activates modules for (boot, a grant, an install).
    var operationCause = ActivationCause.boot

    // MARK: What modules read, and what the host is told

    /// Each module's configuration as read, and the watch that reloads it.
    var configurationReads = ConfigurationReads()
    /// Each module's current configuration values and their observers (reloads change them).
    let configurationHub = ConfigurationHub()
    let changes = Broadcast<StateChange>()
    /// Advances whenever a module's state changes.
    let moduleVersion: VersionCounter
    /// Told of every change of ``renderVersions``.
    let renderSignal: Broadcast<Void>
    /// What the modules and diagnostics gauges last showed.
    var gauges = GaugeCounts()

    // MARK: The hubs (what active modules are granted, through their ledgers)

    var serviceRuntime: ServiceRuntime
    /// What active modules contribute, mediated per point.
    let contributionHub: ContributionHub
    /// The store as module views reach it (weakly).
    let weakContributionHub: WeakContributionHub
    /// The deeplink handlers of active modules.
    let deeplinkRouter: DeeplinkRouter
    /// Events between modules.
    let eventHub: EventHub
    /// State shared between modules.
    let stateHub: StateHub
    /// The embedded database, when the kernel keeps state and events in its state directory.
    let embedded: EmbeddedStorage?

    // MARK: The operation under way, and those waiting

    /// The slot ``exclusively(_:)`` guards, and the operations waiting for it.
    var operations = OperationLine()
    /// The jobs under way, while ``runInDependencyOrder(_:kind:)`` runs.
    var schedule: Schedule?
    /// How many scheduling runs there have been; numbers each run.
    var runCount = 0
    /// The parts of the phase or event being dispatched, as they finish.
    var dispatchEntries: [DispatchReport.Entry] = []
    /// With ``KernelOptions/watchesReleases``: the objects each module held when it last began to deactivate.
    var releaseWatches: [ModuleID: [WatchedObject]] = [:]

    /// Creates a kernel over a catalog and validates its graph from the modules' declarations; nothing activates before
    /// ``boot()``.
    public init(
        catalog: ModuleCatalog,
        host: HostEnvironment,
        entitlements: EntitlementPolicy = .none,
        services: ServiceRegistrar = ServiceRegistrar(),
        standard: (any Standard)? = nil,
        extensionPoints: [AnyExtensionPoint] = [],
        navigator: @escaping @Sendable (_ tab: String) async -> Void = { _ in },
        options: KernelOptions = KernelOptions(),
        logger: Logger = Logger(label: "mosaic.kernel")
    ) {
        self.catalog = catalog
        self.host = host
        self.policy = entitlements
        self.defaultPolicy = entitlements
        self.hostServices = services
        self.standard = standard
        self.contextShared = ActivationContext.Shared(host: host, standard: standard)
        self.extensionPoints = extensionPoints
        self.options = options
        self.clock = KernelClock(options.clock)
        self.logger = logger
        let telemetry = Telemetry(options: options)
        self.telemetry = telemetry
        let isolation = Isolation(options: options.isolation, clock: self.clock, logger: logger)
        self.isolation = isolation
        self.graph = ModuleGraph(
            catalog: isolation.wrap(catalog), host: host, services: services, standard: standard,
            extensionPoints: extensionPoints)
        self.serviceRuntime = ServiceRuntime(
            graph: graph, preview: options.preview, observer: ServiceTelemetry.observer(for: telemetry))
        let clock = self.clock
        // External storage when the host has one; else the embedded database in the state directory; else memory.
        let embedded =
            options.externalStorage == nil
            ? options.stateDirectory.map {
                EmbeddedStorage(directory: $0, busyTimeLimit: options.stateDatabaseBusyTimeLimit, clock: clock)
            } : nil
        self.embedded = embedded
        let outbox: any DurableEventStore =
            if let external = options.externalStorage { external.events } else if let embedded { embedded } else {
                MemoryEventStore(clock: clock)
            }
        let eventHub = EventHub(
            telemetry: telemetry,
            outbox: DurableOutbox(
                store: outbox,
                options: options.durableEvents, clock: clock, telemetry: telemetry,
                timeLimit: options.storageTimeLimit))
        eventHub.reservePublishers(graph.nodes.count + 1)
        self.eventHub = eventHub
        let renderSignal = Broadcast<Void>()
        self.renderSignal = renderSignal
        self.moduleVersion = VersionCounter(signal: renderSignal)
        let contributionHub = ContributionHub(points: graph.points.values, signal: renderSignal)
        self.contributionHub = contributionHub
        self.weakContributionHub = WeakContributionHub(contributionHub)
        self.stateHub = StateHub(
            transactional: options.externalStorage?.state ?? embedded, telemetry: telemetry, signal: renderSignal,
            events: eventHub, clock: clock, timeLimit: options.storageTimeLimit)
        self.deeplinkRouter = DeeplinkRouter(
            navigator: navigator, pendingLimit: options.pendingDeeplinkLimit,
            pendingTimeLimit: options.pendingDeeplinkTimeLimit, clock: clock, telemetry: telemetry)
        deeplinkRouter.setOwners(graph.deeplinkOwners)
        self.records = Array(repeating: Record(), count: graph.nodes.count)
        isolation.onCrash { [weak self] id, crash in await self?.isolatedProcessEnded(id, crash) }
    }

    deinit {
        // A kernel dropped without shutdown() still takes back what its modules hold and ends every feed. The
        // event hub ends first, all publishers at once, so that each ledger's withdrawal finds none to remove.
        eventHub.finish()
        for index in records.indices { records[index].ledger?.withdraw() }
        policyReads.stop()
        strandedSweep?.cancel()
        changes.finish()
        contributionHub.finish()
        deeplinkRouter.finish()
        stateHub.finish()
        renderSignal.finish()
    }

    /// Creates a kernel over module types listed in code.
    public init(
        modules: [any Module.Type],
        host: HostEnvironment,
        entitlements: EntitlementPolicy = .none,
        services: ServiceRegistrar = ServiceRegistrar(),
        standard: (any Standard)? = nil,
        extensionPoints: [AnyExtensionPoint] = [],
        navigator: @escaping @Sendable (_ tab: String) async -> Void = { _ in },
        options: KernelOptions = KernelOptions(),
        logger: Logger = Logger(label: "mosaic.kernel")
    ) {
        self.init(
            catalog: ModuleCatalog(modules: modules), host: host, entitlements: entitlements, services: services,
            standard: standard, extensionPoints: extensionPoints, navigator: navigator, options: options,
            logger: logger)
    }

    /// Every problem with `catalog` on `host` under `entitlements`, found from the modules' declarations alone: what
    /// ``boot()`` would report before activating anything. For unit tests and command-line checks.
    public static func validate(
        _ catalog: ModuleCatalog, host: HostEnvironment, entitlements: EntitlementPolicy = .none,
        services: ServiceRegistrar = ServiceRegistrar(), standard: (any Standard)? = nil,
        extensionPoints: [AnyExtensionPoint] = []
    ) -> [Diagnostic] {
        let graph = ModuleGraph(
            catalog: catalog, host: host, services: services, standard: standard, extensionPoints: extensionPoints)
        return graph.diagnostics + graph.verdicts(under: entitlements).diagnostics
    }

    /// The state of the module with identifier `id`, or `nil` when the kernel has no such module.
    public func state(of id: ModuleID) -> ModuleState? {
        graph.position[id].map { records[$0].lifecycle.state }
    }

    /// The state of every module.
    public var states: [ModuleID: ModuleState] {
        Dictionary(uniqueKeysWithValues: zip(graph.ids, records.map(\.lifecycle.state)))
    }

    /// The entitlements granted now.
    public var grantedEntitlements: Set<Entitlement> { policy.granted }

    /// Every state change from now on, in order, until ``shutdown()``.
    ///
    /// Subscribe before ``boot()`` to see a module's whole life. Each subscriber gets every change.
    public nonisolated func stateChanges() -> Feed<StateChange> {
        changes.subscribe().feed
    }

    /// The report of every module as it stands now, with every current diagnostic.
    public func report() -> BootReport {
        let entries = records.indices.map { index in
            BootReport.Entry(
                id: graph.nodes[index].id, version: graph[manifestAt: index].version,
                origin: graph.entry(of: index).origin, state: records[index].lifecycle.state,
                activationTime: records[index].activationTime, phaseTimes: records[index].phaseTimes,
                cause: records[index].activationTime == nil ? nil : records[index].cause,
                startTriggers: records[index].lifecycle.state == .standby ? graph.startTriggers(of: index) : [],
                process: isolation[graph.nodes[index].id]?.status)
        }
        return BootReport(modules: entries, diagnostics: diagnostics, duration: bootDuration)
    }

    /// Every current problem: discovery and validation, authorization, then what happened at run time.
    public var diagnostics: [Diagnostic] {
        graph.diagnostics + authorizationDiagnostics + runtimeDiagnostics + stateHub.diagnostics
            + (policyReads.problem.map { [$0] } ?? [])
    }

    func requireRunning() throws(KernelError) {
        switch status {
        case .running: return
        case .idle: throw KernelError(.notBooted, "The kernel is not booted yet; call boot() first.")
        case .shutDown: throw KernelError(.shutDown, "The kernel was shut down; create a new one.")
        }
    }
}
