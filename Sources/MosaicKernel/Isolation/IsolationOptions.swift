public import Mosaic

/// Which modules run in a process of their own, and how the kernel keeps them running.
///
/// A module runs isolated when its manifest says `isolation: .process`, or when the host names it in ``modules``
/// (for a module it did not write, whose code stays as it is). Its process is a child of the host's own executable,
/// which must hand it over at start: `IsolatedModuleProcess.serveIfAsked(catalog:)` first thing in `main`.
///
/// ```swift
/// var options = KernelOptions()
/// options.isolation.modules = ["com.vendor.reports"]
/// ```
///
/// A child that ends (a trap, a signal, an exit, a closed pipe) or misses its heartbeat fails its module alone, with the signal and the
/// last lines the child wrote to its standard error; the kernel restarts it after ``restartDelay``, doubled each
/// time, at most ``restartLimit`` times within ``restartWindow``. After that it stays failed until
/// `Kernel.restart(_:)` (the control plane's Restart) starts it again.
public struct IsolationOptions: Sendable {
    /// Modules to isolate besides those whose manifest asks for it.
    public var modules: Set<ModuleID> = []
    /// The executable a module's process runs; `nil` runs the host's own (`Bundle.main.executablePath`). Tests name
    /// an executable that serves their modules.
    public var executable: String? = nil
    /// How many restarts after crashes within ``restartWindow``; the crash after the last leaves the module failed.
    public var restartLimit = 3
    /// The window ``restartLimit`` counts in.
    public var restartWindow: Duration = .seconds(300)
    /// The wait before the first restart after a crash; each further one in the window waits twice as long.
    public var restartDelay: Duration = .seconds(1)
    /// How often the host asks a running module's process to answer at once (its heartbeat).
    public var heartbeatInterval: Duration = .seconds(1)
    /// How long the host waits for a heartbeat's answer before it kills the process as stopped or stuck (a
    /// `SIGSTOP`, every thread blocked): a crash like any other.
    public var heartbeatTimeLimit: Duration = .seconds(5)
    /// How many of the last lines of a child's standard error a crash report keeps.
    public var standardErrorLines = 20
    /// Set in a module's own process, whose kernel runs the module in process.
    var insideChild = false
    /// In a module's own process, what gives the module the host's shared state and events.
    var sharing: ChildSharing?

    /// Options isolating only the modules whose manifest asks for it.
    public init() {}

    /// Whether the module of `manifest` runs in a process of its own.
    func isolates(_ manifest: Manifest) -> Bool {
        !insideChild && (manifest.isolation == .process || modules.contains(manifest.id))
    }
}
