internal import Synchronization

/// One fan-out, the primitive under every stream the kernel hands out: state changes, shared state observers,
/// event subscriptions and contribution observers.
///
/// Each subscriber has its own ``Mailbox`` with its own buffering, read through an `AsyncStream`. A stream ends when
/// the broadcast finishes (the kernel shut down), when its reader stops listening, or when its ``Subscription`` is
/// cancelled (a module's ledger does that when it is withdrawn). `send` offers the element to every mailbox inside
/// the broadcast's lock, so every subscriber sees elements in the order they were sent.
///
/// A send boxes its element once and hands the same box to every mailbox, in code that does not depend on the type
/// the subscribers read: fan-out costs no generic-metadata lookup per subscriber. Each reader turns elements into
/// its own type in its own task.
final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var mailboxes: [Mailbox] = []
        var finished = false
    }

    private let state = Mutex(State())

    init() {}

    /// A new subscriber's stream: `first` (when given), then each element sent from now on, both as `convert`
    /// makes them (`nil` skips one). After ``finish()`` the stream is empty and ends at once. `observe` learns how
    /// each element sent fared in the subscriber's buffer (for the kernel's metrics).
    func subscribe<Output: Sendable>(
        buffering: Mailbox.Buffering = .unbounded, first: Element? = nil,
        observe: (@Sendable (Mailbox.Outcome) -> Void)? = nil,
        convert: @escaping @Sendable (Element) -> Output?
    ) -> Subscription<Output> {
        subscription(buffering: buffering, first: first.map { $0 as any Sendable }, observe: observe) { element in
            (element as? Element).flatMap(convert)
        }
    }

    /// Hands `element` to every subscriber.
    func send(_ element: Element) {
        let boxed: any Sendable = element
        state.withLock { state in
            for mailbox in state.mailboxes { mailbox.offer(boxed) }
        }
    }

    /// Ends every stream, and every later one at once.
    func finish() {
        let ended = state.withLock { state in
            state.finished = true
            defer { state.mailboxes = [] }
            return state.mailboxes
        }
        for mailbox in ended { mailbox.finish() }
    }

    /// A stream reading a new mailbox, each element as `convert` makes it.
    fileprivate func subscription<Output: Sendable>(
        buffering: Mailbox.Buffering, first: (any Sendable)?, observe: (@Sendable (Mailbox.Outcome) -> Void)?,
        convert: @escaping @Sendable (any Sendable) -> Output?
    ) -> Subscription<Output> {
        let mailbox = Mailbox(buffering: buffering, first: first, observe: observe)
        let added = state.withLock { state in
            guard !state.finished else { return false }
            state.mailboxes.append(mailbox)
            return true
        }
        guard added else { return .ended() }
        // The reader's hold: once the stream is dropped, or its task cancelled, nobody reads this mailbox again.
        let reader = Reader(mailbox) { [weak self] in
            self?.remove(mailbox)
            mailbox.cancel()
        }
        let stream = AsyncStream<Output>(
            unfolding: {
                while let element = await reader.mailbox.next() {
                    if let output = convert(element) { return output }
                }
                return nil
            }, onCancel: { reader.stop() })
        return Subscription(
            stream: stream,
            cancel: { [weak self] in
                self?.remove(mailbox)
                mailbox.finish()
            }, ended: mailbox.ended)
    }

    private func remove(_ mailbox: Mailbox) {
        state.withLock { state in
            if let index = state.mailboxes.firstIndex(where: { $0 === mailbox }) { state.mailboxes.remove(at: index) }
        }
    }
}

extension Broadcast where Element == any Sendable {
    /// A new subscriber's stream of the elements that are `Output`s (others are skipped): `first` (when given),
    /// then each one sent from now on. The reader casts each element to `Output`, the type it was given here,
    /// so reading costs no generic-metadata lookup either.
    func subscribe<Output: Sendable>(
        as type: Output.Type, buffering: Mailbox.Buffering, first: (any Sendable)? = nil,
        observe: (@Sendable (Mailbox.Outcome) -> Void)? = nil
    ) -> Subscription<Output> {
        subscription(buffering: buffering, first: first, observe: observe) { $0 as? Output }
    }
}

/// A reader's hold on its mailbox: `stop` runs when the reading task is cancelled or the stream is dropped (this
/// object lives exactly as long as the stream's closures).
private final class Reader: Sendable {
    let mailbox: Mailbox
    let stop: @Sendable () -> Void

    init(_ mailbox: Mailbox, stop: @escaping @Sendable () -> Void) {
        self.mailbox = mailbox
        self.stop = stop
    }

    deinit { stop() }
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
