internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// One child process that runs an isolated module, seen from the host: calls go as frames to its standard input,
/// replies come back on its standard output, and what it writes to its standard error is logged with the module's
/// label, its last lines kept for the report of a crash.
///
/// The child has ended once its process terminated and both its output pipes closed (so that every reply it wrote
/// and every line of its standard error were read first): then every call still waiting fails at once with the
/// reason, and `ended` runs once.
final class ChildProcess: Sendable {
    /// The environment variable that tells the executable which module to serve instead of starting as a host.
    static let moduleVariable = "MOSAIC_ISOLATED_MODULE"

    let module: ModuleID
    /// The child's process identifier.
    var processIdentifier: Int32 { process.processIdentifier }
    private let process: Process
    /// Written on `writer`, one write at a time.
    private let input: FileHandle
    private let writer: DispatchQueue
    private let state: Locked<State>
    private let logger: Logger

    private struct State {
        var pending: [Int: CheckedContinuation<Data?, any Error>] = [:]
        var nextCall = 0
        var reader = FrameReader()
        var standardError = StandardErrorTail()
        var outputClosed = false
        var errorClosed = false
        var termination: String?
        /// Why the host killed the child, when it did: said before how it ended.
        var killedBecause: String?
        /// Why the child ended, once it has; set once.
        var ended: String?
        var endWaiters: [CheckedContinuation<String, Never>] = []
        var ending: (@Sendable (String) -> Void)?
        /// What takes the child's requests and notices, in the order they arrive.
        var inbound: (@Sendable (BoundaryFrame) -> Void)?
    }

    /// Starts `executable` serving `module`; `ended` is called once with why the child ended.
    init(
        module: ModuleID, executable: String, standardErrorLines: Int, logger: Logger,
        ended: @escaping @Sendable (_ reason: String) -> Void
    ) throws {
        Self.ignoreBrokenPipes
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = []
        var environment = ProcessInfo.processInfo.environment
        environment[Self.moduleVariable] = module.rawValue
        process.environment = environment
        let pipes = try ChildPipes()
        process.standardInput = pipes.childEnds.input
        process.standardOutput = pipes.childEnds.output
        process.standardError = pipes.childEnds.error
        self.module = module
        self.process = process
        self.input = pipes.input
        self.writer = DispatchQueue(label: "mosaic.isolation.\(module)")
        self.logger = logger
        self.state = Locked(State(standardError: StandardErrorTail(keeping: standardErrorLines), ending: ended))
        process.terminationHandler = { [weak self] process in
            self?.terminated(Self.describe(process.terminationReason, process.terminationStatus))
        }
        do {
            try ChildPipes.spawning.withLock { _ in try process.run() }
        } catch {
            pipes.abandon()
            throw error
        }
        pipes.start(
            label: "mosaic.isolation.\(module)", output: { [weak self] in self?.received(output: $0) },
            error: { [weak self] in self?.received(error: $0) })
    }

    /// A write to the pipe of a child that ended fails with EPIPE instead of ending the host with SIGPIPE. Process
    /// wide and once: the host's own sockets ask not to be signalled, so nothing else depends on the default.
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Sends `call` and waits for the reply: what it carries, or the child's error. Fails at once when the child
    /// has ended or ends before it answers; a cancelled caller stops waiting (the child's reply is then dropped).
    func call(_ call: BoundaryCall) async throws -> Data? {
        let number = state.withLock { state -> Int in
            state.nextCall += 1
            return state.nextCall
        }
        let frame = try FrameReader.bytes(of: .call(id: number, call))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let ended = state.withLock { state -> String? in
                    if let ended = state.ended { return ended }
                    if Task.isCancelled { return "" }
                    state.pending[number] = continuation
                    return nil
                }
                if let ended {
                    continuation.resume(throwing: ended.isEmpty ? CancellationError() : BoundaryError(ended))
                    return
                }
                writer.async { [input, weak self] in
                    do {
                        try input.write(contentsOf: frame)
                    } catch {
                        self?.finish(number, with: .failure(BoundaryError("its pipe is closed (\(error))")))
                    }
                }
            }
        } onCancel: {
            finish(number, with: .failure(CancellationError()))
        }
    }

    /// Has `take` called with each request and notice from the child, in the order they arrive, on the thread that
    /// reads them (so it must not wait).
    func onInbound(_ take: @escaping @Sendable (BoundaryFrame) -> Void) {
        state.withLock { $0.inbound = take }
    }

    /// Sends `frame` (an answer or a notice) after every frame sent before it; a child that ended drops it.
    func send(_ frame: BoundaryFrame) {
        guard let bytes = try? FrameReader.bytes(of: frame) else { return }
        writer.async { [input] in try? input.write(contentsOf: bytes) }
    }

    /// Closes the child's input, which tells it to exit, and waits until it has ended; after `grace` the child is
    /// killed, and after another `grace` it counts as ended whether or not its end was reported (so that a host
    /// never waits on a child without bound). Returns why it ended.
    @discardableResult
    func stop(grace: Duration, clock: KernelClock) async -> String {
        writer.async { [input] in try? input.close() }
        let killer = Task { [processIdentifier, weak self] in
            try await clock.sleep(clock.now() + grace)
            _ = kill(processIdentifier, SIGKILL)
            try await clock.sleep(clock.now() + grace)
            self?.end(because: "its process (\(processIdentifier)) was killed, and its end was not reported")
        }
        let reason = await ended()
        killer.cancel()
        return reason
    }

    /// Ends the child now (SIGKILL); `reason`, when given, is said first in why it ended.
    func killNow(because reason: String? = nil) {
        if let reason { state.withLock { $0.killedBecause = $0.killedBecause ?? reason } }
        _ = kill(processIdentifier, SIGKILL)
    }

    /// Why the child ended, once it has.
    func ended() async -> String {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> String? in
                if let ended = state.ended { return ended }
                state.endWaiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// The last lines of the child's standard error.
    var standardErrorTail: [String] { state.withLock { $0.standardError.lines } }

    private func received(output data: Data) {
        var replies: [(CheckedContinuation<Data?, any Error>, Result<Data?, any Error>)] = []
        var inbound: [BoundaryFrame] = []
        var broken: String?
        let take = state.withLock { state -> (@Sendable (BoundaryFrame) -> Void)? in
            if data.isEmpty {
                state.outputClosed = true
                return nil
            }
            do {
                for frame in try state.reader.frames(after: data) {
                    guard case .reply(let number, let reply) = frame else {
                        inbound.append(frame)
                        continue
                    }
                    guard let waiting = state.pending[number] else { continue }
                    state.pending[number] = nil
                    switch reply {
                    case .done(let value): replies.append((waiting, .success(value)))
                    case .failed(let message):
                        replies.append((waiting, .failure(ModuleProcessError(description: message))))
                    }
                }
            } catch {
                broken = String(describing: error)
            }
            return state.inbound
        }
        for (continuation, result) in replies { continuation.resume(with: result) }
        // Taken on the reading thread, in order: a notice's effect comes before any later frame's.
        if let take { for frame in inbound { take(frame) } }
        if let broken {
            logger.error(
                "an isolated module's process broke the protocol; it is ended", metadata: ["reason": "\(broken)"])
            killNow(because: "it broke the protocol (\(broken))")
        }
        if data.isEmpty { endIfDone() }
    }

    private func received(error data: Data) {
        let lines = state.withLock { state -> [String] in
            if data.isEmpty {
                state.errorClosed = true
                return state.standardError.flush()
            }
            return state.standardError.append(data)
        }
        for line in lines { logger.info("\(line)", metadata: ["stream": "stderr"]) }
        if data.isEmpty { endIfDone() }
    }

    private func terminated(_ reason: String) {
        state.withLock { $0.termination = reason }
        endIfDone()
    }

    /// Ends the child now, for `reason`, if it has not ended: every waiting call fails with it.
    private func end(because reason: String) {
        state.withLock { state in
            state.termination = state.termination ?? reason
            state.outputClosed = true
            state.errorClosed = true
        }
        endIfDone()
    }

    /// Ends the child once it terminated and both pipes closed: every waiting call fails with the reason.
    private func endIfDone() {
        let ended = state.withLock {
            state -> (
                String, [CheckedContinuation<Data?, any Error>], [CheckedContinuation<String, Never>],
                (@Sendable (String) -> Void)?
            )? in
            guard state.ended == nil, let termination = state.termination, state.outputClosed, state.errorClosed else {
                return nil
            }
            let tail = state.standardError.lines
            let reason =
                (state.killedBecause.map { "\($0), so the host killed it: " } ?? "")
                + "its process (\(processIdentifier)) \(termination)"
                + (tail.isEmpty ? "" : "; it wrote last: \(tail.joined(separator: " | "))")
            state.ended = reason
            defer {
                state.pending = [:]
                state.endWaiters = []
                state.ending = nil
                state.inbound = nil
            }
            return (reason, Array(state.pending.values), state.endWaiters, state.ending)
        }
        guard let (reason, pending, waiters, ending) = ended else { return }
        // The crash is counted before any caller learns of it, so that what a failed call leads to sees it.
        ending?(reason)
        for call in pending { call.resume(throwing: BoundaryError(reason)) }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    private func finish(_ number: Int, with result: Result<Data?, any Error>) {
        let waiting = state.withLock { $0.pending.removeValue(forKey: number) }
        waiting?.resume(with: result)
    }

    /// How a process ended, in words: the signal by name (a Swift trap is SIGILL or SIGTRAP), or the status.
    static func describe(_ reason: Process.TerminationReason, _ status: Int32) -> String {
        guard reason == .uncaughtSignal else { return "exited with status \(status)" }
        let names: [Int32: String] = [
            SIGILL: "SIGILL, a trap", SIGTRAP: "SIGTRAP, a trap", SIGABRT: "SIGABRT", SIGSEGV: "SIGSEGV",
            SIGBUS: "SIGBUS", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGFPE: "SIGFPE",
        ]
        return "ended with signal \(status)" + (names[status].map { " (\($0))" } ?? "")
    }
}
