internal import Mosaic
internal import Synchronization

/// One fan-out, the primitive under every feed the kernel hands out: state changes, shared state observers,
/// event subscriptions, contribution observers and configuration updates.
///
/// Each subscriber has its own ``Mailbox`` with its own buffering, read as a ``Feed``. A feed ends when
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

    private let state = Locked(State())

    init() {}

    /// A new subscriber's feed: `first` (when given), then each element sent from now on. After ``finish()`` the
    /// feed is empty and ends at once. `observe` learns how each element sent fared in the subscriber's buffer
    /// (for the kernel's metrics).
    func subscribe(
        buffering: Mailbox.Buffering = .unbounded, first: Element? = nil,
        observe: (@Sendable (Mailbox.Outcome) -> Void)? = nil
    ) -> Subscription<Element> {
        subscription(buffering: buffering, first: first, accepts: nil, observe: observe) { Self.unbox($0) }
    }

    /// A new subscriber's feed of what `convert` makes of `first` (when given) and of each element sent from now
    /// on (`nil` skips one). After ``finish()`` the feed is empty and ends at once.
    func subscribe<Output: Sendable>(
        buffering: Mailbox.Buffering = .unbounded, first: Element? = nil,
        convert: @escaping @Sendable (Element) -> Output?
    ) -> Subscription<Output> {
        // The mailbox keeps only what converts; the reader converts it again rather than keep two types of parcel.
        subscription(
            buffering: buffering, first: first, accepts: { convert(Self.unbox($0)) != nil }, observe: nil,
            read: { convert(Self.unbox($0)) })
    }

    /// Hands `element` to every subscriber; makes and boxes it only when there is one (most module state changes
    /// at boot have no reader yet, and making one retains the module's identifier).
    func send(_ element: @autoclosure () -> Element) {
        state.withLock { state in
            guard !state.mailboxes.isEmpty else { return }
            let parcel = Box(element())
            for mailbox in state.mailboxes { mailbox.offer(parcel) }
        }
    }

    /// Ends every feed, and every later one at once.
    func finish() {
        let ended = state.withLock { state in
            state.finished = true
            defer { state.mailboxes = [] }
            return state.mailboxes
        }
        for mailbox in ended { mailbox.finish() }
    }

    /// A feed of what `read` makes of the elements of a new mailbox that `accepts` takes.
    private func subscription<Output: Sendable>(
        buffering: Mailbox.Buffering, first: Element?, accepts: (@Sendable (Mailbox.Parcel) -> Bool)?,
        observe: (@Sendable (Mailbox.Outcome) -> Void)?, read: @escaping @Sendable (Mailbox.Parcel) -> Output?
    ) -> Subscription<Output> {
        let mailbox = Mailbox(
            buffering: buffering, first: first.map { Box($0) }, accepts: accepts, observe: observe)
        let added = state.withLock { state in
            guard !state.finished else { return false }
            state.mailboxes.append(mailbox)
            return true
        }
        guard added else { return .ended() }
        return Subscription(
            feed: Feed(MailboxFeed(mailbox, of: self, read: read)),
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

    func remove(_ mailbox: Mailbox) {
        state.withLock { state in
            if let index = state.mailboxes.firstIndex(where: { $0 === mailbox }) { state.mailboxes.remove(at: index) }
        }
    }
}

/// A broadcast whatever its element type, for a hub that keeps one per type.
protocol AnyBroadcast: AnyObject, Sendable {
    /// Ends every feed, and every later one at once.
    func finish()
    /// Stops offering elements to `mailbox`.
    func remove(_ mailbox: Mailbox)
}

/// One element sent, shared by every subscriber's mailbox.
private final class Box<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// A subscriber's mailbox read as a ``Feed``: what `read` makes of each element (the mailbox keeps only elements
/// `read` makes something of). Once its reading task is cancelled, or the feed is dropped, nobody reads the mailbox
/// again: it leaves the broadcast and drops what waits.
private final class MailboxFeed<Output: Sendable>: FeedSource {
    private let mailbox: Mailbox
    private weak let broadcast: (any AnyBroadcast)?
    private let read: @Sendable (Mailbox.Parcel) -> Output?

    init(_ mailbox: Mailbox, of broadcast: any AnyBroadcast, read: @escaping @Sendable (Mailbox.Parcel) -> Output?) {
        self.mailbox = mailbox
        self.broadcast = broadcast
        self.read = read
    }

    func next(isolation actor: isolated (any Actor)?) async -> Output? {
        // Suspends only when nothing waits; the mailbox is read in place, not through another async call.
        let parcel: Mailbox.Parcel?
        if !Task.isCancelled, let ready = mailbox.take() {
            parcel = ready
        } else {
            parcel = await withTaskCancellationHandler(
                operation: { await withUnsafeContinuation(isolation: actor) { mailbox.wait($0) } },
                onCancel: { self.stop() }, isolation: actor)
        }
        // Returned as it is: a local `Output?` would ask the runtime for its metadata on every call.
        guard let parcel else { return nil }
        return read(parcel)
    }

    private func stop() {
        broadcast?.remove(mailbox)
        mailbox.cancel()
    }

    deinit { stop() }
}

/// A feed from a ``Broadcast``, with a way to end it from outside and to learn when it ended.
struct Subscription<Output: Sendable>: Sendable {
    let feed: Feed<Output>
    /// Ends the feed (its reader's loop then ends too).
    let cancel: @Sendable () -> Void
    /// Fires once the feed has ended, for whatever reason (its reader dropped it, too).
    let ended: EndHook
}

extension Subscription {
    /// A feed that has already ended, for a subscriber that came too late (the kernel shut down).
    static func ended() -> Self {
        let ended = EndHook()
        ended.fire()
        return Subscription(feed: .ended, cancel: {}, ended: ended)
    }
}

/// Something to do once a feed has ended; set before or after the end, it runs exactly once.
final class EndHook: Sendable {
    private let state = Locked<(ended: Bool, action: (@Sendable () -> Void)?)>((false, nil))

    /// Runs `action` when the feed ends, or now if it has.
    func whenEnded(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.ended { return true }
            state.action = action
            return false
        }
        if now { action() }
    }

    /// The feed ended.
    func fire() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            state.ended = true
            defer { state.action = nil }
            return state.action
        }
        action?()
    }
}
