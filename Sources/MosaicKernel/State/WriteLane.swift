internal import Mosaic
internal import Synchronization

/// Orders the writes of one state key: one at a time, first come first served, and a writer waits for its turn by
/// suspending (never on a thread), at most until its deadline.
///
/// The holder may hand the lane on to a storage call that outlives it (a call whose deadline passed): the lane is
/// then released when that call answers, so the next write of the key never overtakes one the storage may still
/// store.
final class WriteLane: Sendable {
    private struct State {
        var held = false
        var waiters: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextTicket = 0
        /// Tickets issued whose waiter has not joined `waiters` yet, and why one was given up on meanwhile (a
        /// cancellation that came first).
        var joining: [Int: (any Error)?] = [:]
    }

    private let state = Locked(State())

    /// Takes the lane, waiting for the writes before this one; throws ``Deadline/Exceeded`` when `clock` reaches
    /// `deadline` (or the task is cancelled) first.
    func acquire(until deadline: Duration, on clock: KernelClock) async throws {
        let ticket = state.withLock { state -> Int? in
            guard state.held else {
                state.held = true
                return nil
            }
            state.nextTicket += 1
            state.joining[state.nextTicket] = .some(nil)
            return state.nextTicket
        }
        guard let ticket else { return }
        let timer = Task {
            try await clock.sleep(deadline)
            giveUp(ticket, Deadline.Exceeded(cancelled: false, sent: false))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Bool, any Error> in
                    let givenUp = state.joining.removeValue(forKey: ticket) ?? nil
                    if let givenUp { return .failure(givenUp) }
                    if !state.held {
                        state.held = true
                        return .success(true)
                    }
                    state.waiters.append((ticket, continuation))
                    return .success(false)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            giveUp(ticket, Deadline.Exceeded(cancelled: true, sent: false))
        }
    }

    /// Lets the next writer in.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }

    /// Gives up on waiter `ticket` with `error`: resumes it if it waits, marks it if it has yet to join, and does
    /// nothing if it already has the lane.
    private func giveUp(_ ticket: Int, _ error: any Error) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if let index = state.waiters.firstIndex(where: { $0.ticket == ticket }) {
                return state.waiters.remove(at: index).continuation
            }
            if state.joining[ticket] != nil { state.joining[ticket] = .some(error) }
            return nil
        }
        waiter?.resume(throwing: error)
    }
}
