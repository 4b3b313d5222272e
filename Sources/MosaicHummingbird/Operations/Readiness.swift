internal import Mosaic
internal import Synchronization

/// Where a served host is in its life, as `/health/ready` reports it: starting (the kernel is booting), ready, or
/// stopping (from the moment shutdown starts, before any module deactivates).
package final class Readiness: Sendable {
    /// The host's phase.
    package enum Phase: Sendable, Equatable {
        case starting
        case ready
        case stopping
    }

    private struct State {
        var phase = Phase.starting
        /// Who waits for the host to start stopping (open live pages' streams), by number.
        var waiting: [Int: AsyncStream<Void>.Continuation] = [:]
        var next = 0
    }

    private let state = Locked(State())

    package init() {}

    /// The phase now.
    package var phase: Phase { state.withLock { $0.phase } }

    /// Boot finished: ready, unless shutdown already began.
    package func markReady() {
        state.withLock { if $0.phase == .starting { $0.phase = .ready } }
    }

    /// Shutdown began; the host stays not ready from now on, and every ``stopping()`` stream ends.
    package func markStopping() {
        let waiting = state.withLock { state in
            state.phase = .stopping
            defer { state.waiting = [:] }
            return state.waiting.values
        }
        for continuation in waiting { continuation.finish() }
    }

    /// A stream that ends when shutdown begins (at once if it has): what ends the host's long-lived responses, so
    /// that a graceful shutdown does not wait for them.
    package func stopping() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let number: Int? = state.withLock { state in
            guard state.phase != .stopping else { return nil }
            state.next += 1
            state.waiting[state.next] = continuation
            return state.next
        }
        guard let number else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.waiting.removeValue(forKey: number) }
        }
        return stream
    }
}
