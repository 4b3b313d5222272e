public import Configuration
public import CoreMetrics
public import Mosaic
public import Tracing

/// How the kernel runs modules.
public struct KernelOptions: Sendable {
    /// How long a module's `activate` may take before the module is failed and its task cancelled.
    public var activationTimeLimit: Duration
    /// How long a module's deactivation may take before the kernel stops waiting for it: the wait for its calls,
    /// tasks and durable handlers under way to end, then its `deactivate`. When the limit passes during the wait,
    /// `deactivate` is never run for that instance (the module may be active again by the time the wait ends).
    public var deactivationTimeLimit: Duration
    /// How long one module's participants in a phase, or its listeners for a host event, may take before the
    /// kernel reports them timed out and goes on without them.
    public var participantTimeLimit: Duration
    /// Which links the kernel accepts.
    public var deeplinkRules: DeeplinkRules
    /// How many links may wait at once for their handler's module to activate.
    public var pendingDeeplinkLimit: Int
    /// How long a link waits for its handler's module before it is reported not handled.
    public var pendingDeeplinkTimeLimit: Duration
    /// The directory of embedded storage (`state.sqlite`: persisted keys and durable events); `nil` keeps them in
    /// memory.
    public var stateDirectory: String?
    /// How long a write to the state database waits for another process's lock before it fails (SQLite's busy
    /// timeout).
    public var stateDatabaseBusyTimeLimit: Duration
    /// How long a call to storage may take before it fails with an `unavailable` code.
    ///
    /// - It bounds a state write, a transaction and a durable publish, counting the wait for earlier writes of the
    ///   same keys.
    /// - The web host answers such a failure with 503.
    public var storageTimeLimit: Duration
    /// How many modules may activate (or deactivate) at once; at least 1.
    public var maximumConcurrentActivations: Int
    /// Whether services use their preview factories, where they have one (for design-time hosts and demos).
    public var preview: Bool
    /// The clock every time limit and delay above is measured on, and the report's timings; tests pass a manual
    /// clock (MosaicTesting's `ManualClock`) so that no test waits for, or races, the wall clock.
    public var clock: any Clock<Duration>
    /// Where the kernel's spans go; `nil` uses the tracer the host bootstrapped (`InstrumentationSystem`), which
    /// is a no-op tracer when it bootstrapped none. The kernel never bootstraps one.
    public var tracer: (any Tracer)? = nil
    /// Where the kernel's metrics go; `nil` uses the factory the host bootstrapped (`MetricsSystem`). The kernel
    /// never bootstraps one.
    public var metricsFactory: (any MetricsFactory)? = nil
    /// Whether every service resolve is counted (`mosaic_service_resolves_total`); off by default, so that the
    /// resolve hot path costs one untaken branch.
    public var countsEveryResolve = false
    /// Where modules' configuration values come from (environment variables, a JSON file, the command line…),
    /// asked in order; boot reads and checks every key a module declares before any module runs.
    public var configurationProviders: [any ConfigProvider] = []
    /// The external storage every instance of the app uses (`MosaicPostgres`'s `PostgresBackend.storage`).
    ///
    /// - With it, every persisted key, durable event and entitlement decision lives there, and the policy the
    ///   kernel is created with is the default for entitlements no instance has granted or revoked yet.
    /// - Without it (`nil`), persisted keys and durable events are in ``stateDirectory``, and the policy is this
    ///   process's.
    public var externalStorage: ExternalStorage? = nil
    /// How durable events are retried and claimed (see `DurableEvent`).
    public var durableEvents = DurableEventOptions()
    /// Which modules run in a process of their own, and how they are restarted after a crash.
    public var isolation = IsolationOptions()
    /// Whether the kernel watches, as each module deactivates, the objects of the module's own types it can reach
    /// (the module, its built services and what they hold), so that a test can ask which outlived it
    /// (MosaicTesting's `expectReleased`). Off outside tests: it walks the module's values once per deactivation.
    package var watchesReleases = false

    /// Options with defaults suited to an app: 10 s limits, 8 modules at a time.
    public init(
        activationTimeLimit: Duration = .seconds(10),
        deactivationTimeLimit: Duration = .seconds(10),
        participantTimeLimit: Duration = .seconds(10),
        deeplinkRules: DeeplinkRules = DeeplinkRules(),
        pendingDeeplinkLimit: Int = 32,
        pendingDeeplinkTimeLimit: Duration = .seconds(10),
        stateDirectory: String? = nil,
        maximumConcurrentActivations: Int = 8,
        preview: Bool = false,
        stateDatabaseBusyTimeLimit: Duration = .seconds(5),
        storageTimeLimit: Duration = .seconds(5),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.storageTimeLimit = storageTimeLimit
        self.clock = clock
        self.stateDatabaseBusyTimeLimit = stateDatabaseBusyTimeLimit
        self.preview = preview
        self.activationTimeLimit = activationTimeLimit
        self.deactivationTimeLimit = deactivationTimeLimit
        self.participantTimeLimit = participantTimeLimit
        self.deeplinkRules = deeplinkRules
        self.pendingDeeplinkLimit = max(0, pendingDeeplinkLimit)
        self.pendingDeeplinkTimeLimit = pendingDeeplinkTimeLimit
        self.stateDirectory = stateDirectory
        self.maximumConcurrentActivations = max(1, maximumConcurrentActivations)
    }
}
