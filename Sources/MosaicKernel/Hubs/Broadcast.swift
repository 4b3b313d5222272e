internal import Synchronization

/// One fan-out, the primitive under every stream the kernel hands out: state changes, shared state observers,
/// event subscriptions and contribution observers.
///
/// Each subscriber has its own ``Mailbox`` with its own buffering, read through an `AsyncStream`. A stream ends when
/// the broadcast finishes (the kernel shut down), when its reader stops listening, or when its ``Subscription`` is
/// cancelled (a module's ledger does that when it is withdrawn). `send` offers the element to every mailbox inside
/// the broadcast's lock, so every subscriber sees elements in the order they were sent.
///
/// A send boxes its element once and hands that one reference to every mailbox, in code that does not depend on
/// `Element`: fanning out costs no generic-metadata lookup and no conversion per subscriber. A hub that carries
/// values of many types keeps one broadcast per type (made once, on the type's first use), so its readers get
/// their own type back without a dynamic cast.
final class Broadcast<Element: Sendable>: AnyBroadcast {
    private struct State {
        var mailboxes: [Mailbox] = []
        var finished = false
    }

    private let state = Mutex(State())

    init() {}

    /// A new subscriber's stream: `first` (when given), then each element sent from now on. After ``finish()`` the
    /// stream is empty and ends at once. `observe` learns how each element sent fared in the subscriber's buffer
    /// (for the kernel's metrics).
    func subscribe(
        buffering: Mailbox.Buffering = .unbounded, first: Element? = nil,
        observe: (@Sendable (Mailbox.Outcome) -> Void)? = nil
    ) -> Subscription<Element> {
        subscription(buffering: buffering, first: first, observe: observe) { mailbox in
            {
                guard let parcel = await mailbox.next() else { return nil }
                return Self.unbox(parcel)
            }
        }
    }

    /// A new subscriber's stream of what `convert` makes of `first` (when given) and of each element sent from now
    /// on (`nil` skips one). After ``finish()`` the stream is empty and ends at once.
    func subscribe<Output: Sendable>(
        buffering: Mailbox.Buffering = .unbounded, first: Element? = nil,
        convert: @escaping @Sendable (Element) -> Output?
    ) -> Subscription<Output> {
        subscription(buffering: buffering, first: first, observe: nil) { mailbox in
            {
                while let parcel = await mailbox.next() {
                    if let output = convert(Self.unbox(parcel)) { return output }
                }
                return nil
            }
        }
    }

    /// Hands `element` to every subscriber; boxes it only when there is one (most module state changes at boot
    /// have no reader yet).
    func send(_ element: Element) {
        state.withLock { state in
            guard !state.mailboxes.isEmpty else { return }
            let parcel = Box(element)
            for mailbox in state.mailboxes { mailbox.offer(parcel) }
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

    /// A stream whose elements `read` takes from a new mailbox.
    private func subscription<Output: Sendable>(
        buffering: Mailbox.Buffering, first: Element?, observe: (@Sendable (Mailbox.Outcome) -> Void)?,
        read: (Mailbox) -> @Sendable () async -> Output?
    ) -> Subscription<Output> {
        let mailbox = Mailbox(buffering: buffering, first: first.map { Box($0) }, observe: observe)
        let added = state.withLock { state in
            guard !state.finished else { return false }
            state.mailboxes.append(mailbox)
            return true
        }
        guard added else { return .ended() }
        // The reader's hold: once the stream is dropped, or its task cancelled, nobody reads this mailbox again.
        let reader = Reader { [weak self] in
            self?.remove(mailbox)
            mailbox.cancel()
        }
        let next = read(mailbox)
        // `onCancel` lives as long as the stream, and with it `reader`.
        let stream = AsyncStream<Output>(unfolding: next, onCancel: { reader.stop() })
        return Subscription(
            stream: stream,
            cancel: { [weak self] in
                self?.remove(mailbox)
                mailbox.finish()
            }, ended: mailbox.ended)
    }

    /// The element in `parcel`, which came from this broadcast.
    private static func unbox(_ parcel: Mailbox.Parcel) -> Element {
        // Every parcel in this broadcast's mailboxes is a `Box<Element>`: `send` and `first` are the only ways in.
        unsafeDowncast(parcel, to: Box<Element>.self).value
    }

    private func remove(_ mailbox: Mailbox) {
        state.withLock { state in
            if let index = state.mailboxes.firstIndex(where: { $0 === mailbox }) { state.mailboxes.remove(at: index) }
        }
    }
}

/// A broadcast whatever its element type, for a hub that keeps one per type.
protocol AnyBroadcast: AnyObject, Sendable {
    /// Ends every stream, and every later one at once.
    func finish()
}

/// One element sent, shared by every subscriber's mailbox.
private final class Box<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// A reader's hold on its mailbox: `stop` runs when the reading task is cancelled or the stream is dropped (this
/// object lives exactly as long as the stream's closures).
private final class Reader: Sendable {
    let stop: @Sendable () -> Void

    init(stop: @escaping @Sendable () -> Void) {
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
