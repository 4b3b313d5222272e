internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// The kernel's side of durable events: records published ones in the store, registers handlers, and runs each
/// running handler's deliveries.
///
/// Publishes share commits (``GroupCommit``): while one group is being stored, every publish that arrives waits for
/// the next, which stores all of them in one call (all or none, as one publish).
final class DurableOutbox: Sendable {
    let store: any DurableEventStore
    let options: DurableEventOptions
    let clock: KernelClock
    let telemetry: Telemetry
    /// How long a publish may wait for the outbox's storage.
    let timeLimit: Duration
    private let logger = Logger(label: "mosaic.durable-events")
    /// The handlers running on this instance, as `module/name`.
    private let running = Locked<Set<String>>([])
    /// The handlers running on this instance now.
    var runningHandlers: Set<String> { running.withLock { $0 } }
    /// Each publish's events, stored with the publishes that arrive with it.
    private let publishes: GroupCommit<[OutboxEvent], Void>
    /// The handlers' work under way: drains of deliveries, and recordings of their outcomes.
    let activity = Activity()

    /// The result of `call` to the outbox's storage, waited for at most ``timeLimit``: throws ``Deadline/Exceeded``
    /// past it, or at once when the caller is cancelled (a module deactivating), while the call goes on; `late` gets
    /// its result then. A store that answers at once (memory) is called directly.
    func withinTimeLimit<R: Sendable>(
        _ call: @escaping @Sendable (any DurableEventStore) async throws -> R,
        late: @escaping @Sendable (Result<R, any Error>) -> Void = { _ in }
    ) async throws -> R {
        let store = store
        guard !store.answersAtOnce else { return try await call(store) }
        return try await Deadline.wait(until: clock.now() + timeLimit, on: clock, { try await call(store) }, late: late)
    }

    /// Claims a batch of `subscriber`'s due deliveries, waiting at most ``timeLimit``; a claim answered after the
    /// caller stopped waiting is given back, so that no lease holds its deliveries.
    func claim(for subscriber: String) async throws -> [DurableDelivery] {
        let (store, options) = (store, options)
        return try await withinTimeLimit { store in
            try await store.claim(subscriber, limit: options.batchSize, lease: options.claimLease)
        } late: { result in
            guard case .success(let late) = result, let claim = late.first?.claim else { return }
            Task { try? await store.release(late.map(\.id), claim: claim) }
        }
    }

    /// At most this many events go into one commit; more wait for the next.
    static let eventsPerCommit = 1_000

    init(
        store: any DurableEventStore, options: DurableEventOptions, clock: KernelClock, telemetry: Telemetry,
        timeLimit: Duration = .seconds(5)
    ) {
        self.store = store
        self.options = options.normalized
        self.clock = clock
        self.telemetry = telemetry
        self.timeLimit = timeLimit
        publishes = GroupCommit(limit: Self.eventsPerCommit, weight: \.count) { [store] publishes in
            try await store.append(publishes.flatMap(\.self))
            return publishes.map { _ in () }
        }
    }

    /// Puts `events` into the outbox, for every handler of their types, all or none; returns once they are stored,
    /// or fails with ``EventError/Code/unavailable`` when the storage has not answered by `deadline`. Events still
    /// waiting for a commit then are never stored, so the queue of an outbox whose storage does not answer holds at
    /// most a time limit's publishes. Without a deadline (an outbox in memory, which always answers), it waits for
    /// the commit however long.
    func append(_ events: [OutboxEvent], until deadline: Duration?) async throws(EventError) {
        do {
            if let deadline {
                try await publishes.submit(events, until: deadline, on: clock)
            } else {
                try await publishes.submit(events)
            }
        } catch {
            let what = events.count == 1 ? events[0].type : "\(events.count) durable events"
            let sender = events.first.map { " from \($0.sender)" } ?? ""
            if let timeout = error as? Deadline.Exceeded {
                let waited =
                    "\(what)\(sender) waited for the outbox past \(timeout.cancelled ? "its cancellation" : "its time limit") "
                    + "(KernelOptions.storageTimeLimit)"
                throw EventError(
                    .unavailable,
                    timeout.sent
                        ? waited + ". If the storage answers late it may still be stored; publishing again then stores "
                            + "it twice, under a new id."
                        : waited + " and was not stored; publishing again stores it once.")
            }
            throw EventError(
                .unavailable,
                "\(what)\(sender) may not have been put into the outbox: \(error). If the storage answered nothing, "
                    + "it may still have been stored; publishing again then stores it twice, under a new id.")
        }
    }

    /// `event` as the outbox keeps it, with a new identifier.
    func encode<Event: DurableEvent>(_ event: Event, from sender: ModuleID) throws(EventError) -> OutboxEvent {
        do {
            return OutboxEvent(
                id: UUID(), type: Event.durableName, payload: try JSONEncoder().encode(event), sender: sender)
        } catch {
            throw EventError(.invalid, "\(Event.durableName) from \(sender) could not be encoded as JSON: \(error).")
        }
    }

    /// Registers `module`'s handler `name` and returns the work that hands it its deliveries until cancelled,
    /// running `handler` through `call` (the module's services and calls) with each event, and committing what
    /// a handler that takes a transaction records with `commit`.
    func register<Event: DurableEvent>(
        _ type: Event.Type, module: ModuleID, name: String,
        call: @escaping @Sendable (@Sendable () async throws -> DeliveryOutcome) async throws -> DeliveryOutcome,
        commit: RecordedCommit? = nil,
        handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> DeliveryOutcome
    ) async throws(EventError) -> (work: @Sendable () async -> Void, end: @Sendable () -> Void) {
        let subscriber = "\(module.rawValue)/\(name)"
        guard running.withLock({ $0.insert(subscriber).inserted }) else {
            throw EventError(
                .duplicate,
                "\(module) already has a durable handler named \(name.quotedForMessage()); name each one once.")
        }
        do {
            let store = store
            try await Deadline.wait(until: clock.now() + timeLimit, on: clock) {
                try await store.subscribe(subscriber, module: module, to: Event.durableName)
            }
        } catch {
            running.withLock { _ = $0.remove(subscriber) }
            throw EventError(
                .unavailable,
                "\(module)'s handler \(name.quotedForMessage()) of \(Event.durableName) could not be recorded in the "
                    + "outbox: \(error). Activate the module again once the outbox's storage is reachable.")
        }
        // One decoder for all the handler's deliveries: a decode keeps no state between calls.
        let decoder = JSONDecoder()
        let dispatcher = DurableDispatcher(
            outbox: self, subscriber: subscriber, logger: Logger(label: module.rawValue),
            deliver: { delivery in
                try await call { try await handler(try Self.envelope(delivery, as: Event.self, with: decoder)) }
            }, commit: commit)
        return (dispatcher.run, { self.running.withLock { _ = $0.remove(subscriber) } })
    }

    /// `delivery`'s event, decoded as `type`.
    private static func envelope<Event: DurableEvent>(
        _ delivery: DurableDelivery, as type: Event.Type, with decoder: JSONDecoder
    ) throws -> DurableEnvelope<Event> {
        let event: Event
        do {
            event = try decoder.decode(Event.self, from: delivery.payload)
        } catch {
            throw UnreadableEvent(
                "\(delivery.type) \(delivery.event) cannot be read as \(Event.self): \(error). Make the type read "
                    + "what was published (or resubmit it after a release that can).")
        }
        return DurableEnvelope(
            id: delivery.event, attempt: delivery.attempt, sender: delivery.sender,
            publishedAt: delivery.publishedAt, event: event)
    }
}

/// A delivery's event cannot be decoded as its handler's type: no retry can help, so it is parked at once.
struct UnreadableEvent: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Work under way, counted, and a wait for none: what a test waits for before it moves a manual clock, so that no
/// time limit of work in flight passes because the machine was slow.
package final class Activity: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Some work started.
    func begin() { state.withLock { $0.running += 1 } }

    /// The work `begin()` counted ended.
    func end() {
        let settled = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in settled { waiter.resume() }
    }

    /// Returns once no work is under way.
    package func settled() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.running == 0 { return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
