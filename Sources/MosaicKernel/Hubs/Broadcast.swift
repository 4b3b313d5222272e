internal import Synchronization

/// One fan-out, the primitive under every stream the kernel hands out: state changes, shared state observers,
/// event subscriptions and contribution observers.
///
/// Each subscriber gets its own `AsyncStream` with its own buffering policy. A stream ends when the broadcast
/// finishes (the kernel shut down), when its reader stops listening, or when its ``Subscription`` is cancelled
/// (a module's ledger does that when it is withdrawn). `send` yields inside the broadcast's lock, so every
/// subscriber sees elements in the order they were sent.
final class Broadcast<Element: Sendable>: Sendable {
    private struct Subscriber {
        let yield: @Sendable (Element) -> Void
        let finish: @Sendable () -> Void
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var next = 0
        var finished = false
    }

    private let state = Mutex(State())

    init() {}

    /// A new subscriber's stream: `first` (when given), then what `convert` makes of each element sent from now
    /// on (`nil` skips it). After ``finish()`` the stream is empty and ends at once. `observe` learns how each
    /// element sent fared in the subscriber's buffer (for the kernel's metrics).
    func subscribe<Output: Sendable>(
        bufferingPolicy: AsyncStream<Output>.Continuation.BufferingPolicy = .unbounded, first: Output? = nil,
        observe: (@Sendable (AsyncStream<Output>.Continuation.YieldResult) -> Void)? = nil,
        convert: @escaping @Sendable (Element) -> Output?
    ) -> Subscription<Output> {
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: bufferingPolicy)
        let subscriber = Subscriber(
            yield: { element in
                guard let output = convert(element) else { return }
                let result = continuation.yield(output)
                observe?(result)
            }, finish: { continuation.finish() })
        let token: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            if let first { continuation.yield(first) }
            defer { state.next += 1 }
            state.subscribers[state.next] = subscriber
            return state.next
        }
        guard let token else {
            continuation.finish()
            return .ended(stream)
        }
        let ended = EndHook()
        continuation.onTermination = { [weak self] _ in
            self?.remove(token)
            ended.fire()
        }
        return Subscription(stream: stream, cancel: { [weak self] in self?.end(token) }, ended: ended)
    }

    /// Hands `element` to every subscriber.
    func send(_ element: Element) {
        state.withLock { state in
            for subscriber in state.subscribers.values { subscriber.yield(element) }
        }
    }

    /// Ends every stream, and every later one at once.
    func finish() {
        let ended = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in ended { subscriber.finish() }
    }

    private func remove(_ token: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: token) }
    }

    private func end(_ token: Int) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: token) }
        subscriber?.finish()
    }
}

/// A stream from a ``Broadcast``, with a way to end it from outside and to learn when it ended.
struct Subscription<Output: Sendable>: Sendable {
    let stream: AsyncStream<Output>
    /// Ends the stream (its reader's loop then ends too).
    let cancel: @Sendable () -> Void
    /// Fires once the stream has ended, for whatever reason (its reader dropped it, too).
    let ended: EndHook
}

extension Subscription {
    /// A stream that has already ended, for a subscriber that came too late (the kernel shut down).
    static func ended() -> Self {
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self)
        continuation.finish()
        return .ended(stream)
    }

    fileprivate static func ended(_ stream: AsyncStream<Output>) -> Self {
        let ended = EndHook()
        ended.fire()
        return Subscription(stream: stream, cancel: {}, ended: ended)
    }
}

/// Something to do once a stream has ended; set before or after the end, it runs exactly once.
final class EndHook: Sendable {
    private let state = Mutex<(ended: Bool, action: (@Sendable () -> Void)?)>((false, nil))

    /// Runs `action` when the stream ends, or now if it has.
    func whenEnded(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.ended { return true }
            state.action = action
            return false
        }
        if now { action() }
    }

    /// The stream ended.
    func fire() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            state.ended = true
            defer { state.action = nil }
            return state.action
        }
        action?()
    }
}
