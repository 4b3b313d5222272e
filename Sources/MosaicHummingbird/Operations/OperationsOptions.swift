public import Mosaic

/// What the host's operations endpoints answer from: `/health/ready` (which modules must be active, how long a
/// module's health check may take) and `/metrics` (the text the host's metrics backend emits).
public struct OperationsOptions: Sendable {
    /// Modules that must be active for the host to be ready; any other module may be down.
    public var requiredModules: Set<ModuleID>
    /// How long one module's health check may take before it counts as failed.
    public var healthCheckTimeLimit: Duration
    /// The clock the time limit is measured on; tests pass a manual clock.
    public var clock: any Clock<Duration>
    /// The body of `/metrics` (such as a Prometheus registry's text), or `nil` to serve no `/metrics`. The library
    /// bootstraps no metrics backend: the host owns it, and hands its output here.
    public var metrics: (@Sendable () -> String)?

    /// Options: no required module, 5 s per health check, no `/metrics`.
    public init(
        requiredModules: Set<ModuleID> = [], healthCheckTimeLimit: Duration = .seconds(5),
        clock: any Clock<Duration> = ContinuousClock(), metrics: (@Sendable () -> String)? = nil
    ) {
        self.requiredModules = requiredModules
        self.healthCheckTimeLimit = healthCheckTimeLimit
        self.clock = clock
        self.metrics = metrics
    }
}
