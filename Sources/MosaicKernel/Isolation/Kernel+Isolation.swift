internal import Logging
public import Mosaic
internal import Synchronization

/// The kernel's isolated modules: one ``IsolatedModule`` per module that runs in a process of its own, made when
/// the graph is made.
final class Isolation: Sendable {
    private let options: IsolationOptions
    private let clock: KernelClock
    private let logger: Logger
    private let modules = Locked<[ModuleID: IsolatedModule]>([:])
    /// What a crash of an isolated module calls: the kernel's handling, set once the kernel is made.
    private let crashed = Locked<(@Sendable (ModuleID, IsolatedModuleCrash) async -> Void)?>(nil)

    init(options: IsolationOptions, clock: KernelClock, logger: Logger) {
        self.options = options
        self.clock = clock
        self.logger = logger
    }

    /// `catalog` with each module to isolate run by an ``IsolatedModule``; the others as they are.
    func wrap(_ catalog: ModuleCatalog) -> ModuleCatalog {
        // Most apps isolate nothing: their catalog is not copied.
        guard catalog.entries.contains(where: { options.isolates($0.manifest) }) else { return catalog }
        return catalog.mapFactories { factory in
            guard options.isolates(factory.manifest) else { return factory }
            let id = factory.manifest.id
            let isolated = modules.withLock { modules in
                if let known = modules[id] { return known }
                let made = IsolatedModule(id: id, options: options, clock: clock, logger: logger)
                made.onCrash { [self] crash in await crashed.withLock { $0 }?(id, crash) }
                modules[id] = made
                return made
            }
            return isolated.factory(wrapping: factory)
        }
    }

    /// Has `handler` called when an isolated module's process ends while the module runs.
    func onCrash(_ handler: @escaping @Sendable (ModuleID, IsolatedModuleCrash) async -> Void) {
        crashed.withLock { $0 = handler }
    }

    subscript(id: ModuleID) -> IsolatedModule? { modules.withLock { $0[id] } }

    var all: [IsolatedModule] { modules.withLock { $0.values.sorted { $0.id < $1.id } } }
}

extension Kernel {
    /// The modules that run in a process of their own: each one's process, restarts and last crash.
    public nonisolated func isolatedModules() -> [IsolatedModuleStatus] { isolation.all.map(\.status) }

    /// Starts a failed module again: for one that crashed more often than its restart budget allows, or failed to
    /// activate. The crashes counted against the budget are forgotten. Returns the module's state once that settles;
    /// a module that is not failed is left as it is.
    ///
    /// - Throws: ``KernelError`` when there is no such module or the kernel is not running.
    @discardableResult
    public func restart(_ id: ModuleID) async throws(KernelError) -> ModuleState {
        isolation[id]?.forgetCrashes()
        return try await restartFailed(id, cause: "restarted by an operator")
    }

    /// Moves failed module `id` back to deactivated and lets the kernel start it again.
    private func restartFailed(_ id: ModuleID, cause: String) async throws(KernelError) -> ModuleState {
        try await exclusively { () async throws(KernelError) -> ModuleState in
            try requireRunning()
            guard let index = graph.position[id] else {
                throw KernelError(.unknownModule, "No module \(id) is installed; nothing was restarted.", module: id)
            }
            // A fault of its declarations stays: restarting cannot fix it.
            guard case .failed(let failed) = records[index].lifecycle, graph.nodes[index].fault == nil else {
                return records[index].lifecycle.state
            }
            failures[id] = nil
            runtimeDiagnostics.removeAll { $0.modules.first == id }
            logger.info("restarting a failed module", metadata: ["module": "\(id)", "cause": "\(cause)"])
            move(index) { _ in .deactivated(failed.restart()) }
            if let problem = loadConfiguration(index) { failures[id] = problem }
            await reconcile()
            return records[index].lifecycle.state
        }
    }

    /// Module `id`'s process ended while the module ran: the module fails (its contributions leave, its links are
    /// refused with the reason, what requires it stops), then restarts after the delay the budget gives.
    func isolatedProcessEnded(_ id: ModuleID, _ crash: IsolatedModuleCrash) async {
        try? await exclusively { () async throws(KernelError) in
            try requireRunning()
            guard let index = graph.position[id], records[index].isActive else { return }
            failures[id] = crash.reason
            runtimeDiagnostics.append(
                Diagnostic(
                    .processEnded, .error, modules: [id], message: "\(id) failed: \(crash.reason)",
                    fix: "Fix the crash in \(id) (its last lines above say where); the kernel restarts it within "
                        + "KernelOptions.isolation's budget, and Kernel.restart(_:) starts it after that."))
            await reconcile()
        }
        guard let delay = crash.restartAfter else {
            logger.error(
                "an isolated module crashed more often than its restart budget allows; it stays failed until restarted",
                metadata: [
                    "module": "\(id)", "limit": "\(options.isolation.restartLimit)",
                    "window": "\(options.isolation.restartWindow)",
                ])
            return
        }
        do {
            try await clock.sleep(clock.now() + delay)
            _ = try await restartFailed(id, cause: "its process ended: \(crash.reason.prefix(200))")
        } catch {
            logger.debug("an isolated module was not restarted", metadata: ["module": "\(id)", "error": "\(error)"])
        }
    }

    /// Warns of each module the host asks to isolate that its catalog does not have: a misspelt identifier would
    /// otherwise leave the module the host meant running in process, unnoticed.
    func reportUnknownIsolatedModules() {
        for id in options.isolation.modules.sorted() where graph.position[id] == nil {
            runtimeDiagnostics.append(
                Diagnostic(
                    .unknownIsolatedModule, .warning, modules: [],
                    message: "KernelOptions.isolation.modules names \(id), which is not in the catalog; nothing runs "
                        + "in a process of its own under that name.",
                    fix: "Correct the identifier to one of the catalog's modules, or remove it."))
        }
    }

    /// Kills the process of isolated module `id` (SIGKILL), as a crash would: for tests of what a crash does.
    /// `false` when no process runs it.
    package nonisolated func killIsolatedProcess(of id: ModuleID) -> Bool { isolation[id]?.killProcess() ?? false }
}
