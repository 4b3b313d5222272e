internal import Foundation
internal import Logging
public import Mosaic
internal import Synchronization

/// The host's side of one isolated module: the module the kernel activates in its place, the process that runs
/// it now (if one does), and its crashes.
final class IsolatedModule: Sendable {
    let id: ModuleID
    private let options: IsolationOptions
    private let executable: String
    private let clock: KernelClock
    private let logger: Logger
    private let state = Locked(State())

    private struct State {
        /// The process now, with the token its end is reported with.
        var child: (token: UUID, process: ChildProcess)?
        /// When it crashed, on the kernel's clock, within the restart window.
        var crashes: [Duration] = []
        var restarts = 0
        var lastCrash: String?
        var onCrash: (@Sendable (IsolatedModuleCrash) async -> Void)?
        /// The kernel's handling of the last crash: failing the module, then restarting it after a delay.
        var handling: Task<Void, Never>?
        /// The heartbeat of the process now.
        var heartbeat: Task<Void, Never>?
        /// What the module declares it shares: the state keys and event types that cross to its process.
        var interactions = ModuleInteractions()
        /// The configuration keys the module declares, whose values the host sends its process.
        var configurationKeys: [AnyConfigurationKey] = []
    }

    init(id: ModuleID, options: IsolationOptions, clock: KernelClock, logger: Logger) {
        self.id = id
        self.options = options
        self.executable = options.executable ?? Self.ownExecutable
        self.clock = clock
        var logger = logger
        logger[metadataKey: "module"] = "\(id)"
        self.logger = logger
    }

    /// The host's own executable.
    private static var ownExecutable: String { Bundle.main.executablePath ?? CommandLine.arguments[0] }

    /// Called when the module's process ends while it runs (not when the host stops it).
    func onCrash(_ action: @escaping @Sendable (IsolatedModuleCrash) async -> Void) {
        state.withLock { $0.onCrash = action }
    }

    /// `original` as the host runs it: the same manifest; declarations whose code runs in the module's process.
    func factory(wrapping original: ModuleFactory) -> ModuleFactory {
        ModuleFactory(
            isolating: original,
            register: { [self] registrar in
                var own = ModuleRegistrar()
                original.register(&own)
                state.withLock { state in
                    state.interactions = own.interactions
                    state.configurationKeys = own.configurationKeys
                }
                registrar = own.remote(
                    content: { [self] point, id, call in
                        try await self.call(.content(point: point, id: id, call: call)) ?? Data()
                    },
                    open: { [self] link in _ = try await call(.open(url: link.url)) },
                    dispatch: { [self] phase, event in
                        _ = try await call(.dispatch(phase: phase?.name, event: event.map(CrossingHostEvent.init)))
                    })
            },
            make: { [self] in ProcessModule(isolated: self) })
    }

    /// Starts the module's process and activates the module there; throws why it did not come up.
    func start(_ context: ActivationContext) async throws {
        guard ProcessInfo.processInfo.environment[ChildProcess.moduleVariable] == nil else {
            // A host started to serve a module that booted as a host instead would start another, and so on.
            throw BoundaryError(
                "this process was started to run an isolated module, yet it boots a host: call "
                    + "IsolatedModuleProcess.serveIfAsked(_:) first thing in main")
        }
        let token = UUID()
        let child = try ChildProcess(
            module: id, executable: executable, standardErrorLines: options.standardErrorLines, logger: logger
        ) { [weak self] reason in self?.ended(token, reason) }
        state.withLock { $0.child = (token, child) }
        logger.info("isolated module's process started", metadata: ["pid": "\(child.processIdentifier)"])
        let (interactions, configurationKeys) = state.withLock { ($0.interactions, $0.configurationKeys) }
        let sharing = SharingHost(
            context: context, interactions: interactions, configurationKeys: configurationKeys, child: child,
            logger: logger)
        sharing.listen()
        do {
            _ = try await child.call(
                .activate(
                    host: HostPlan(context.host), state: sharing.initialState(),
                    configuration: context.configuration.crossing(configurationKeys)))
        } catch let error as ModuleProcessError {
            // The module failed as it would have in process: its process is stopped, which is not a crash.
            state.withLock { if $0.child?.token == token { $0.child = nil } }
            await child.stop(grace: .seconds(2), clock: clock)
            throw error
        } catch is CancellationError {
            state.withLock { if $0.child?.token == token { $0.child = nil } }
            await child.stop(grace: .seconds(2), clock: clock)
            throw CancellationError()
        } catch {
            // The process ended or broke the protocol: a crash, counted and restarted as one (`ended` runs).
            throw BoundaryError(await child.stop(grace: .seconds(2), clock: clock))
        }
        sharing.follow()
        let heartbeat = Task { [clock, options] in
            await Self.beat(child, every: options.heartbeatInterval, within: options.heartbeatTimeLimit, clock: clock)
        }
        let stale = state.withLock { state -> Task<Void, Never>? in
            guard state.child?.token == token else { return heartbeat }
            defer { state.heartbeat = heartbeat }
            return state.heartbeat
        }
        stale?.cancel()
    }

    /// Asks `child` to answer every `interval`; kills it when an answer takes longer than `limit`. Returns when the
    /// child has ended or the task is cancelled.
    private static func beat(
        _ child: ChildProcess, every interval: Duration, within limit: Duration, clock: KernelClock
    )
        async
    {
        while !Task.isCancelled {
            do {
                try await clock.sleep(clock.now() + interval)
            } catch {
                return
            }
            let answered = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do {
                        _ = try await child.call(.ping)
                        return true
                    } catch {
                        return nil
                    }
                }
                group.addTask {
                    do {
                        try await clock.sleep(clock.now() + limit)
                        return false
                    } catch {
                        return nil
                    }
                }
                defer { group.cancelAll() }
                return await group.next() ?? nil
            }
            switch answered {
            case true: continue
            case false:
                child.killNow(because: "it missed its heartbeat (no answer within \(limit): stopped or stuck)")
                return
            case nil: return
            }
        }
    }

    /// Deactivates the module in its process, then ends the process.
    func stop() async {
        guard
            let child = state.withLock({ state -> ChildProcess? in
                defer {
                    state.child = nil
                    state.heartbeat?.cancel()
                    state.heartbeat = nil
                }
                return state.child?.process
            })
        else { return }
        _ = try? await child.call(.deactivate)
        await child.stop(grace: .seconds(2), clock: clock)
    }

    /// Sends `call` to the module's process now. A process that ended before it answered is the module's
    /// unavailability (``ModuleUnavailableError/Code/processEnded``), which a web host answers with a 503.
    private func call(_ call: BoundaryCall) async throws -> Data? {
        guard let child = state.withLock({ $0.child?.process }) else {
            throw ModuleUnavailableError(
                .processEnded, module: id,
                message: "\(id) runs in a process of its own, and none runs now"
                    + (state.withLock { $0.lastCrash }.map { ": \($0)" } ?? "."))
        }
        do {
            return try await child.call(call)
        } catch let error as BoundaryError {
            throw ModuleUnavailableError(.processEnded, module: id, message: "\(id) failed: \(error)")
        }
    }

    /// The process with `token` ended: a crash unless the host had stopped it. It is counted against the restart
    /// budget at once, before any call learns of it.
    private func ended(_ token: UUID, _ reason: String) {
        let now = clock.now()
        let crash = state.withLock { state -> (IsolatedModuleCrash, (@Sendable (IsolatedModuleCrash) async -> Void))? in
            guard state.child?.token == token, let onCrash = state.onCrash else { return nil }
            state.child = nil
            state.heartbeat?.cancel()
            state.heartbeat = nil
            state.lastCrash = reason
            state.crashes = state.crashes.filter { now - $0 < options.restartWindow } + [now]
            guard state.crashes.count <= options.restartLimit else {
                return (IsolatedModuleCrash(reason: reason, restartAfter: nil), onCrash)
            }
            state.restarts += 1
            let delay = options.restartDelay * (1 << (state.crashes.count - 1))
            return (IsolatedModuleCrash(reason: reason, restartAfter: delay), onCrash)
        }
        guard let (crash, onCrash) = crash else { return }
        logger.error("isolated module's process ended", metadata: ["reason": "\(reason)"])
        let handling = Task { await onCrash(crash) }
        state.withLock { $0.handling = handling }
    }

    /// Stops handling the last crash (its restart, if one waits): the kernel shuts down.
    func cancelCrashHandling() {
        state.withLock { $0.handling }?.cancel()
    }

    /// Forgets the crashes counted against the budget: an operator restarted the module.
    func forgetCrashes() { state.withLock { $0.crashes = [] } }

    /// What the host can say of the module's process.
    var status: IsolatedModuleStatus {
        state.withLock { state in
            IsolatedModuleStatus(
                module: id, processIdentifier: state.child?.process.processIdentifier, restarts: state.restarts,
                lastCrash: state.lastCrash, crashesInWindow: state.crashes.count)
        }
    }

    /// Kills the module's process now (SIGKILL), as a crash would end it: for fault tests.
    func killProcess() -> Bool {
        guard let child = state.withLock({ $0.child?.process }) else { return false }
        child.killNow()
        return true
    }
}

/// A crash of an isolated module's process: why it ended, and when the budget lets the module restart (`nil`: it
/// crashed more often than the budget allows, and stays failed).
struct IsolatedModuleCrash: Sendable {
    let reason: String
    let restartAfter: Duration?
}

/// An isolated module's process, as the host reports it (`Kernel.isolatedModules()`).
public struct IsolatedModuleStatus: Sendable, Hashable {
    /// The module.
    public let module: ModuleID
    /// The process that runs it now; `nil` when none runs (stopped, failed, waiting to restart).
    public let processIdentifier: Int32?
    /// How many times the kernel restarted it after a crash (counting one it is about to make).
    public let restarts: Int
    /// Why its process last ended while it ran: the signal or status, and the last lines of its standard error.
    public let lastCrash: String?
    /// The crashes counted against the restart budget now.
    public let crashesInWindow: Int
}

/// The module the host's kernel activates in an isolated module's place: its activation starts the process.
struct ProcessModule: Module {
    static let manifest = Manifest(id: "mosaic.isolated-module", version: "1.0.0")
    private let isolated: IsolatedModule?

    init() { isolated = nil }
    init(isolated: IsolatedModule) { self.isolated = isolated }

    func activate(_ context: ActivationContext) async throws {
        guard let isolated else { throw BoundaryError("made without the module it stands for") }
        try await isolated.start(context)
    }

    func deactivate() async { await isolated?.stop() }
}
