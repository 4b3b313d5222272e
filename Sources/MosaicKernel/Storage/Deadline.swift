internal import Mosaic
internal import Synchronization

/// A call to storage that a caller waits for at most until a deadline on the kernel's clock.
///
/// The call itself runs in a task of its own, so a caller whose deadline passes (or whose task is cancelled) gets
/// its error at once even when the storage never answers: nothing waits on a thread, and nothing that answers late
/// is lost, since `late` gets the call's result when it finally comes (to release what the call held, or to take
/// in a value stored after all).
enum Deadline {
    /// The caller stopped waiting: its deadline passed, or its task was cancelled.
    struct Exceeded: Error, CustomStringConvertible {
        /// Whether the task was cancelled (rather than the deadline passed).
        let cancelled: Bool
        /// Whether the call had reached the storage, which may then have done it all the same; `false` when it
        /// still waited its turn, and never will run.
        let sent: Bool

        var description: String {
            cancelled
                ? "the caller was cancelled before the storage answered"
                : "the storage did not answer within its time limit (KernelOptions.storageTimeLimit)"
        }
    }

    /// The result of `operation`, or ``Exceeded`` once `clock` reaches `deadline` without one. When the caller
    /// stops waiting, `late` gets the result whenever it comes; when the caller gets it, `late` is never called.
    /// `operation` starts even for a caller cancelled before the call: `late` is how its callers release what the
    /// call holds, so it must always come.
    static func wait<R: Sendable>(
        until deadline: Duration, on clock: KernelClock,
        _ operation: @escaping @Sendable () async throws -> R,
        late: @escaping @Sendable (Result<R, any Error>) -> Void = { _ in }
    ) async throws -> R {
        let outcome = DeadlineOutcome<R>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
                outcome.wait(continuation)
                let timer = Task {
                    try await clock.sleep(deadline)
                    outcome.deliver(.failure(Exceeded(cancelled: false, sent: true)))
                }
                outcome.whenDelivered { timer.cancel() }
                Task {
                    let result: Result<R, any Error>
                    do {
                        result = .success(try await operation())
                    } catch {
                        result = .failure(error)
                    }
                    if !outcome.deliver(result) { late(result) }
                }
            }
        } onCancel: {
            outcome.deliver(.failure(Exceeded(cancelled: true, sent: true)))
        }
    }
}

extension Kernel {
    /// The result of `call`, a call to storage, waited for at most ``KernelOptions/storageTimeLimit`` on the
    /// kernel's clock; throws ``Deadline/Exceeded`` past it. Every storage call the kernel makes goes through here.
    nonisolated func withinStorageTimeLimit<R: Sendable>(
        _ call: @escaping @Sendable () async throws -> R,
        late: @escaping @Sendable (Result<R, any Error>) -> Void = { _ in }
    ) async throws -> R {
        try await Deadline.wait(until: clock.now() + options.storageTimeLimit, on: clock, call, late: late)
    }
}

/// The one result a waiting caller gets: the first delivered wins, later ones are refused.
private final class DeadlineOutcome<R: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<R, any Error>?
        /// A result delivered before the caller waited (a cancellation that came first).
        var early: Result<R, any Error>?
        var delivered = false
        var onDelivery: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    func wait(_ continuation: CheckedContinuation<R, any Error>) {
        let early = state.withLock { state -> Result<R, any Error>? in
            guard let early = state.early else {
                state.continuation = continuation
                return nil
            }
            return early
        }
        if let early { continuation.resume(with: early) }
    }

    /// Runs `action` once a result is delivered (at once if it was).
    func whenDelivered(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if !state.delivered { state.onDelivery.append(action) }
            return state.delivered
        }
        if now { action() }
    }

    /// Hands `result` to the caller; `false` when another result got there first.
    @discardableResult
    func deliver(_ result: Result<R, any Error>) -> Bool {
        let taken = state.withLock { state -> (CheckedContinuation<R, any Error>?, [@Sendable () -> Void])? in
            guard !state.delivered else { return nil }
            state.delivered = true
            defer {
                state.continuation = nil
                state.onDelivery = []
            }
            if state.continuation == nil { state.early = result }
            return (state.continuation, state.onDelivery)
        }
        guard let (continuation, actions) = taken else { return false }
        // The timer is cancelled before the caller goes on, so that no timer of an answered call is still
        // counted as waiting on the clock (a test's manual clock would take it for the next call's).
        for action in actions { action() }
        continuation?.resume(with: result)
        return true
    }
}
