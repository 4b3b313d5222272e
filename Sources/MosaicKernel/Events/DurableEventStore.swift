public import Foundation
public import Mosaic

/// One durable event waiting for one handler, claimed by this instance for a while.
package struct DurableDelivery: Sendable {
    /// The delivery's row: one per event and handler.
    package let id: Int64
    /// The event's identifier, the same for every handler.
    package let event: UUID
    /// The event's `DurableEvent.durableName`.
    package let type: String
    /// The event, encoded as JSON.
    package let payload: Data
    package let sender: ModuleID
    package let publishedAt: Date
    /// Which attempt this claim is, from 1.
    package let attempt: Int
    /// The claim that lent the delivery to this instance: only its holder may record the outcome, so an instance
    /// whose lease ran out cannot undo the claim of the instance that took the delivery over.
    package let claim: UUID

    package init(
        id: Int64, event: UUID, type: String, payload: Data, sender: ModuleID, publishedAt: Date, attempt: Int,
        claim: UUID
    ) {
        self.claim = claim
        self.id = id
        self.event = event
        self.type = type
        self.payload = payload
        self.sender = sender
        self.publishedAt = publishedAt
        self.attempt = attempt
    }
}

/// A durable event one handler did not get: parked after its last failed attempt, or abandoned because the
/// handler's module was uninstalled. ``Kernel/resubmit(_:)`` gives it another round of attempts.
public struct UndeliveredEvent: Sendable, Hashable, Identifiable {
    /// Why it waits.
    public enum Reason: String, Sendable, Hashable {
        /// Every attempt failed.
        case parked
        /// Its handler's module was uninstalled.
        case abandoned
    }

    /// The delivery: the event for this one handler.
    public let id: Int64
    /// The event's identifier (its envelope's `DurableEnvelope.id`).
    public let event: UUID
    /// The event's `DurableEvent.durableName`.
    public let type: String
    /// The handler, as `module/name`.
    public let subscriber: String
    /// The module that published the event.
    public let sender: ModuleID
    /// When the event went into the outbox.
    public let publishedAt: Date
    /// How many attempts were made.
    public let attempts: Int
    /// Why the event waits.
    public let reason: Reason
    /// The last attempt's error, or why the delivery was abandoned.
    public let lastError: String

    package init(
        id: Int64, event: UUID, type: String, subscriber: String, sender: ModuleID, publishedAt: Date, attempts: Int,
        reason: Reason, lastError: String
    ) {
        self.id = id
        self.event = event
        self.type = type
        self.subscriber = subscriber
        self.sender = sender
        self.publishedAt = publishedAt
        self.attempts = attempts
        self.reason = reason
        self.lastError = lastError
    }
}

/// A durable handler recorded in the outbox, as the kernel checks for handlers that nothing runs any more.
package struct RecordedHandler: Sendable, Hashable {
    /// The handler, as `module/name`.
    package let subscriber: String
    /// The handler's module.
    package let module: ModuleID
    /// Its deliveries waiting for it.
    package let pending: Int
    /// How long since an instance last ran it, as the store's clock counts.
    package let idle: Duration
    /// Whether another live instance runs it (always `false` for a store of one instance).
    package let runElsewhere: Bool

    package init(subscriber: String, module: ModuleID, pending: Int, idle: Duration, runElsewhere: Bool) {
        self.subscriber = subscriber
        self.module = module
        self.pending = pending
        self.idle = idle
        self.runElsewhere = runElsewhere
    }
}

/// The outbox of durable events and their deliveries, one per event and handler, shared by every instance that
/// uses the same store.
///
/// A delivery is pending until a handler completes it. Claiming one lends it to one instance for a lease; a claim
/// whose lease ran out (its instance crashed or hung) is claimable again, so every delivery is handed out at least
/// once, and to two instances at once only after a lease ran out.
package protocol DurableEventStore: Sendable {
    /// Whether every call answers without waiting on input or output (the kernel's memory store): such calls are not
    /// raced against the storage time limit, which would cost each delivery a timer and two tasks for nothing.
    var answersAtOnce: Bool { get }
    /// Records that the handler `subscriber` (`module/name`) takes every `type` event published from now on.
    func subscribe(_ subscriber: String, module: ModuleID, to type: String) async throws
    /// Puts `events` into the outbox, in order, each with a pending delivery for each handler of its type: all of
    /// them, or none.
    func append(_ events: [OutboxEvent]) async throws
    /// Claims up to `limit` of `subscriber`'s due deliveries (pending, not claimed or with the claim's lease run
    /// out) for `lease`, oldest first (or the earliest due first: a retry's turn comes when it falls due); counts
    /// an attempt on each.
    func claim(_ subscriber: String, limit: Int, lease: Duration) async throws -> [DurableDelivery]
    /// The handler finished `deliveries`: they are done for good. Like the calls below, it changes only
    /// deliveries still held by `claim`; returns how many it completed.
    @discardableResult
    func complete(_ deliveries: [Int64], claim: UUID) async throws -> Int
    /// The attempt failed with `error`: claimable again after `delay`.
    func retry(_ delivery: Int64, claim: UUID, after delay: Duration, error: String) async throws
    /// The last attempt failed with `error`: parked until resubmitted.
    func park(_ delivery: Int64, claim: UUID, error: String) async throws
    /// Claimed deliveries this instance will not attempt after all: claimable again now, the attempt not counted.
    func release(_ deliveries: [Int64], claim: UUID) async throws
    /// Deliveries parked or abandoned, oldest first, at most `limit`.
    func undelivered(limit: Int) async throws -> [UndeliveredEvent]
    /// Makes a parked or abandoned delivery pending again, with its attempts counted from zero; `false` when there
    /// is no such delivery waiting, or no handler is registered to take it (its module was uninstalled).
    func resubmit(_ delivery: Int64) async throws -> Bool
    /// `module` was uninstalled: its handlers take no more events, and their pending deliveries are abandoned.
    func abandon(module: ModuleID, reason: String) async throws
    /// Every handler with deliveries pending.
    func handlersWithPendingDeliveries() async throws -> [RecordedHandler]
    /// The handler `subscriber` is gone for good: it takes no more events, and its pending deliveries are abandoned
    /// with `reason` (listed, and resubmittable should it come back).
    func abandon(subscriber: String, reason: String) async throws
    /// Calls `onAppend` with a handler's name whenever deliveries became claimable for it, from now on, until the
    /// returned watch is cancelled. Wake-ups may be missed (the feed reconnects): claimers also look periodically.
    func watch(_ onAppend: @escaping @Sendable (_ subscriber: String) -> Void) -> StoreWatch
}

extension DurableEventStore {
    /// A store waits on input or output unless it says otherwise.
    package var answersAtOnce: Bool { false }
}
