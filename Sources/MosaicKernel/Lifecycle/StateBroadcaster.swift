internal import Synchronization

/// Hands every state change to every subscriber.
///
/// Each subscriber has its own unbounded buffer: state changes are few (a handful per module per run), and
/// losing one would leave an observer with a wrong picture, so none is dropped.
final class StateBroadcaster: Sendable {
    private struct Subscribers {
        var next = 0
        var continuations: [Int: AsyncStream<StateChange>.Continuation] = [:]
        var finished = false
    }

    private let subscribers = Mutex(Subscribers())

    func subscribe() -> AsyncStream<StateChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: StateChange.self)
        let key: Int? = subscribers.withLock { subscribers in
            guard !subscribers.finished else { return nil }
            subscribers.next += 1
            subscribers.continuations[subscribers.next] = continuation
            return subscribers.next
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    func send(_ change: StateChange) {
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(change) }
    }

    /// Ends every stream, and every later one at once.
    func finish() {
        let continuations = subscribers.withLock { subscribers in
            subscribers.finished = true
            defer { subscribers.continuations = [:] }
            return Array(subscribers.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
