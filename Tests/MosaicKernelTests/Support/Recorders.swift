import Mosaic
import Synchronization

/// Counts activations under way at once, holding each until released.
final class ConcurrencyTracker: Sendable {
    private struct State {
        var inside = 0
        var maximum = 0
        var released = false
        var held: [CheckedContinuation<Void, Never>] = []
        var entered = 0
    }
    private let state = Locked(State())
    private let arrivals = AsyncStream.makeStream(of: Int.self)

    var maximum: Int { state.withLock { $0.maximum } }

    /// Called by a module's activate: waits until released.
    func enter() async {
        await withCheckedContinuation { continuation in
            let (count, release) = state.withLock { state -> (Int, Bool) in
                state.inside += 1
                state.entered += 1
                state.maximum = max(state.maximum, state.inside)
                if state.released {
                    state.inside -= 1
                    return (state.inside, true)
                }
                state.held.append(continuation)
                return (state.inside, false)
            }
            arrivals.continuation.yield(count)
            if release { continuation.resume() }
        }
    }

    /// Returns once `count` activations are under way together.
    func waitUntil(inside count: Int) async {
        for await inside in arrivals.stream where inside >= count { return }
    }

    /// Releases everything held now and later.
    func releaseAll(expecting total: Int) async {
        let held = state.withLock { state in
            state.released = true
            state.inside -= state.held.count
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}

/// Keeps the context a module was activated with.
final class ContextRecorder: Sendable {
    private let stored = Locked<ActivationContext?>(nil)
    func record(_ context: ActivationContext) { stored.withLock { $0 = context } }
    var context: ActivationContext? { stored.withLock { $0 } }
}
