// How a durable handler's call is held to its time limit: the call (`HandlerRun`), the one watch per handler that
// ends a call outliving its deadline (`HandlerWatch`), and the error it ends with. DurableDispatcher runs each
// attempt through them.
internal import Mosaic
internal import Synchronization

/// One handler call: its task, and the continuation its first outcome (the handler's, or the time limit's) resumes.
final class HandlerRun: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<DeliveryOutcome, any Error>, Never>?
        var handler: Task<Void, Never>?
        var cancelled = false
    }

    private let state = Locked(State())

    func wait(_ continuation: CheckedContinuation<Result<DeliveryOutcome, any Error>, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// The handler's task started; cancelled at once when the caller already was.
    func started(_ handler: Task<Void, Never>) {
        let cancel = state.withLock { state in
            state.handler = handler
            return state.cancelled
        }
        if cancel { handler.cancel() }
    }

    /// The caller was cancelled: so is the handler, whose outcome is still awaited.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.handler
        }?.cancel()
    }

    /// The time limit passed: reported first, so that a handler ending on its cancellation does not report that
    /// instead, and then the handler is cancelled.
    func timeOut(after limit: Duration) {
        finish(.failure(HandlerTimedOut(limit: limit)))
        state.withLock { $0.handler }?.cancel()
    }

    /// Hands `result` to the dispatcher, unless it was handed one already; `true` when this was the first.
    @discardableResult
    func finish(_ result: Result<DeliveryOutcome, any Error>) -> Bool {
        guard
            let continuation = state.withLock({ state in
                defer { state.continuation = nil }
                return state.continuation
            })
        else { return false }
        continuation.resume(returning: result)
        return true
    }
}

/// Ends the handler call that outlives its time limit: one task per handler, asleep until the deadline of the call
/// under way, so that a call costs no timer of its own. Calls run one at a time, each with a deadline no earlier than
/// the one before (the kernel's clock never goes back): woken at an old deadline, the watch sleeps on until the
/// current one. A call that ends early leaves the watch asleep until its deadline (one sleeper on a test's clock).
final class HandlerWatch: Sendable {
    private struct State {
        var current: (run: HandlerRun, deadline: Duration)?
        /// The watch, waiting for a call while none is under way.
        var idle: CheckedContinuation<Duration?, Never>?
        var stopped = false
    }

    private let state = Locked(State())

    /// `run` is under way until `deadline`.
    func arm(_ run: HandlerRun, until deadline: Duration) {
        state.withLock { state in
            state.current = (run, deadline)
            defer { state.idle = nil }
            return state.idle
        }?.resume(returning: deadline)
    }

    /// `run` ended.
    func disarm(_ run: HandlerRun) {
        state.withLock { state in
            if state.current?.run === run { state.current = nil }
        }
    }

    /// Ends the watch; no call is under way.
    func stop() {
        state.withLock { state in
            state.stopped = true
            defer { state.idle = nil }
            return state.idle
        }?.resume(returning: nil)
    }

    /// Times out each call still under way at its deadline, until stopped.
    func run(on clock: KernelClock, limit: Duration) async {
        while let deadline = await nextDeadline(), (try? await clock.sleep(deadline)) != nil {
            let now = clock.now()
            let expired = state.withLock { state -> HandlerRun? in
                guard let current = state.current, current.deadline <= now else { return nil }
                state.current = nil
                return current.run
            }
            expired?.timeOut(after: limit)
        }
    }

    /// The deadline of the call under way, once there is one; `nil` once stopped.
    private func nextDeadline() async -> Duration? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Duration?? in
                if state.stopped { return .some(nil) }
                if let current = state.current { return current.deadline }
                state.idle = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// A durable handler outlived its time limit.
struct HandlerTimedOut: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "the handler did not finish within its time limit (\(limit))" }
}
