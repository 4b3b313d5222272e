public import Foundation

/// An event that must not be lost: published into an outbox, and handed to each of its durable handlers at least
/// once, across restarts and crashes of the publishing or the handling instance.
///
/// ```swift
/// struct OrderPlaced: DurableEvent {
///     static let durableName = "com.shop.order-placed"
///     let order: Int
/// }
///
/// // The publishing module: `publish` returns once the event is in the outbox.
/// try await context.events.publish(OrderPlaced(order: 7))
///
/// // A handling module, in `activate`: runs while the module is active, once per event and handler.
/// try await context.events.handle(OrderPlaced.self, as: "send-receipt") { envelope in
///     try await receipts.send(for: envelope.event.order, key: envelope.id)
/// }
/// ```
///
/// A handler that throws (or outlives its time limit) gets the event again later, after a backoff that doubles
/// with each attempt; after the last attempt the delivery is parked, where the host lists it and can resubmit it.
/// Subscribers of the type through ``Events/subscribe(to:buffer:)`` still get it in memory, as any event.
///
/// What holds, per kind of handler:
/// - **A handler that takes a transaction** (`{ envelope, transaction in … }`): exactly once for its effects in
///   Mosaic's state. Its state writes and durable publishes commit in one database transaction with the delivery's
///   completion, and only while this attempt's claim still holds the delivery; otherwise all of it rolls back. The
///   handler's body may run more than once (after a crash, a time-out or a conflict); what it records commits once.
/// - **A handler that does not** (`{ envelope in … }`): at least once. A crash between its effect and the record of
///   its completion repeats the delivery, so an effect outside Mosaic (an email, a payment) is made idempotent with
///   ``DurableEnvelope/id``, the same for every attempt.
public protocol DurableEvent: Codable, Sendable {
    /// The type's name in the outbox: unique in the app, and kept when the Swift type is renamed, since instances
    /// of different releases share the outbox.
    static var durableName: String { get }
}

/// A durable event as its handler receives it.
public struct DurableEnvelope<Event: DurableEvent>: Sendable {
    /// The event's identifier, the same for every handler and every attempt: the key that makes a handler's effect
    /// idempotent.
    public let id: UUID
    /// Which attempt this is: 1 the first time, more after a failure or a crash during an earlier attempt.
    public let attempt: Int
    /// The publishing module, stamped by the kernel.
    public let sender: ModuleID
    /// When the event went into the outbox.
    public let publishedAt: Date
    /// The event.
    public let event: Event

    package init(id: UUID, attempt: Int, sender: ModuleID, publishedAt: Date, event: Event) {
        self.id = id
        self.attempt = attempt
        self.sender = sender
        self.publishedAt = publishedAt
        self.event = event
    }
}

extension Events {
    /// Puts `event` into the outbox for every durable handler of its type, then hands it to this instance's
    /// subscribers; returns once it is stored (with external storage, committed). Publishes made at the same time
    /// share one commit.
    ///
    /// - Throws: ``EventError``: ``EventError/Code/inactive`` when the module is not active,
    ///   ``EventError/Code/unavailable`` when the outbox did not answer in time. The message says which: the event
    ///   was never sent (publishing again stores it once), or its commit was under way and it may still have been
    ///   stored (publishing again then stores it twice, under a new id).
    public func publish<Event: DurableEvent>(_ event: Event) async throws(EventError) {
        try await publish(contentsOf: [event])
    }

    /// Puts every event of `events` into the outbox in one commit (all of them, or none), then hands them to this
    /// instance's subscribers in order.
    ///
    /// - Throws: ``EventError``, as publishing one event.
    public func publish<Event: DurableEvent>(contentsOf events: [Event]) async throws(EventError) {
        guard let bus else { throw Self.notRunning(module) }
        guard !events.isEmpty else { return }
        try await bus.publish(contentsOf: events, from: module)
    }

    /// Hands every `type` event published from now on (by any instance sharing the outbox) to `handler`, at least
    /// once, while this module is active; deliveries made while it is inactive wait for it. Returns once the
    /// handler is recorded in the outbox.
    ///
    /// `name` identifies the handler for good, together with this module's id: events are recorded for it by that
    /// name, so renaming a handler starts a new subscription (the old one's waiting events stay, listed as
    /// undelivered). Instances running the same module share the handler's deliveries: each event goes to one of
    /// them (to more than one only after a crash or a time-out).
    ///
    /// - Throws: ``EventError`` when the module is not active, the name is empty or already taken by another
    ///   handler of this module, or the outbox cannot be reached.
    public func handle<Event: DurableEvent>(
        _ type: Event.Type, as name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> Void
    ) async throws(EventError) {
        guard let bus else { throw Self.notRunning(module) }
        try Self.checkHandlerName(name, of: Event.self, in: module)
        try await bus.handle(type, subscriber: module, name: name, handler)
    }

    /// Hands every `type` event to `handler` as ``handle(_:as:_:)-(_,_,(DurableEnvelope<Event>)->Void)`` does, with
    /// a transaction: what `handler` records in it (state writes, durable publishes) commits together with the
    /// delivery's completion, exactly once.
    ///
    /// ```swift
    /// try await context.events.handle(FeatureOpened.self, as: "count-opens") { envelope, transaction in
    ///     transaction.update(.usage) { $0[envelope.event.feature, default: 0] += 1 }
    /// }
    /// ```
    /// The commit is fenced by the attempt: it completes the delivery only while this attempt's claim still holds
    /// it. An attempt whose lease ran out (another claim took the delivery over) rolls back, is reported stale and is
    /// not retried here; the holder of the new claim handles the event. As in ``SharedState/transaction(_:)``, the
    /// recorded changes run on the current values when the transaction commits, and again should another writer
    /// change a key first, so keep them free of side effects; the body itself may run again after a crash.
    ///
    /// - Throws: ``EventError``, as the handler without a transaction.
    public func handle<Event: DurableEvent>(
        _ type: Event.Type, as name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>, inout StateTransaction) async throws -> Void
    ) async throws(EventError) {
        guard let bus else { throw Self.notRunning(module) }
        try Self.checkHandlerName(name, of: Event.self, in: module)
        try await bus.handle(type, subscriber: module, name: name, transactional: handler)
    }

    /// Refuses a handler name that is empty or has a "/", which separates it from the module's id in the outbox.
    static func checkHandlerName<Event: DurableEvent>(
        _ name: String, of type: Event.Type, in module: ModuleID
    ) throws(EventError) {
        guard !name.isEmpty, !name.contains("/") else {
            throw EventError(
                .invalid,
                "\(module)'s handler of \(Event.durableName) needs a name without \"/\" (e.g. \"send-receipt\"), "
                    + "not \(name.quotedForMessage()).")
        }
    }
}
