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

    private let state = Mutex(Phase.starting)

    package init() {}

    /// The phase now.
    package var phase: Phase { state.withLock { $0 } }

    /// Boot finished: ready, unless shutdown already began.
    package func markReady() {
        state.withLock { if $0 == .starting { $0 = .ready } }
    }

    /// Shutdown began; the host stays not ready from now on.
    package func markStopping() {
        state.withLock { $0 = .stopping }
    }
}
