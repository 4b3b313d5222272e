internal import Foundation
internal import Mosaic
internal import Synchronization

/// The outbox of a kernel without external storage: the same deliveries, claims, retries and parking, kept in this
/// process, so durable events survive a handler's failure or time-out but not the process. Times are read on the
/// kernel's clock. A delivery is forgotten once done.
final class MemoryEventStore: DurableEventStore {
    /// Every call answers from memory.
    var answersAtOnce: Bool { true }

    private struct Delivery {
        let event: Event
        let subscriber: String
        var attempts = 0
        var dueAt: Duration
        var claimedUntil: Duration?
        var claim: UUID?
        var reason: UndeliveredEvent.Reason?
        var lastError = ""
    }

    private struct Event {
        let id: UUID
        let type: String
        let payload: Data
        let sender: ModuleID
        let publishedAt: Date
    }

    private struct State {
        var subscribers: [String: (module: ModuleID, type: String)] = [:]
        /// When each handler last claimed (or was registered), on the kernel's clock.
        var lastRun: [String: Duration] = [:]
        /// The deliveries not done yet.
        var deliveries: [Int64: Delivery] = [:]
        var lastDelivery: Int64 = 0
        /// Each handler's deliveries not done yet, by id, oldest first.
        var open: [String: [Int64]] = [:]
        var watchers: [Int: @Sendable (String) -> Void] = [:]
        var nextWatcher = 0
    }

    private let state = Locked(State())
    private let clock: KernelClock

    init(clock: KernelClock) {
        self.clock = clock
    }

    func subscribe(_ subscriber: String, module: ModuleID, to type: String) {
        let now = clock.now()
        state.withLock { state in
            state.subscribers[subscriber] = (module, type)
            state.lastRun[subscriber] = now
        }
    }

    func append(_ events: [OutboxEvent]) {
        let now = clock.now()
        let (watchers, woken) = state.withLock { state in
            var woken: Set<String> = []
            for outgoing in events {
                let event = Event(
                    id: outgoing.id, type: outgoing.type, payload: outgoing.payload, sender: outgoing.sender,
                    publishedAt: Date())
                let handlers = state.subscribers.filter { $0.value.type == outgoing.type }.map(\.key)
                for subscriber in handlers {
                    state.lastDelivery += 1
                    state.deliveries[state.lastDelivery] = Delivery(event: event, subscriber: subscriber, dueAt: now)
                    state.open[subscriber, default: []].append(state.lastDelivery)
                }
                woken.formUnion(handlers)
            }
            return (Array(state.watchers.values), woken.sorted())
        }
        for subscriber in woken { for watcher in watchers { watcher(subscriber) } }
    }

    func claim(_ subscriber: String, limit: Int, lease: Duration) -> [DurableDelivery] {
        let now = clock.now()
        let claim = UUID()
        return state.withLock { state in
            var claimed: [DurableDelivery] = []
            for id in state.open[subscriber] ?? [] where claimed.count < limit {
                guard let delivery = state.deliveries[id], delivery.reason == nil, delivery.dueAt <= now,
                    delivery.claimedUntil.map({ $0 <= now }) ?? true
                else { continue }
                state.deliveries[id]?.attempts += 1
                state.deliveries[id]?.claimedUntil = now + lease
                state.deliveries[id]?.claim = claim
                let event = delivery.event
                claimed.append(
                    DurableDelivery(
                        id: id, event: event.id, type: event.type, payload: event.payload, sender: event.sender,
                        publishedAt: event.publishedAt, attempt: delivery.attempts + 1, claim: claim))
            }
            // Only a claim that got something moves it: a handler with nothing to claim has no deliveries waiting,
            // which is all the time is read for (stranded handlers).
            if !claimed.isEmpty { state.lastRun[subscriber] = now }
            return claimed
        }
    }

    func complete(_ deliveries: [Int64], claim: UUID) -> Int {
        state.withLock { state in
            var completed = 0
            for delivery in deliveries where state.deliveries[delivery]?.claim == claim {
                guard let done = state.deliveries.removeValue(forKey: delivery) else { continue }
                state.open[done.subscriber]?.removeAll { $0 == delivery }
                completed += 1
            }
            return completed
        }
    }

    /// Completes every one of `deliveries` when `claim` holds them all, and returns none; else completes none and
    /// returns those it does not hold.
    func complete(ifHolding deliveries: [Int64], claim: UUID) -> [Int64] {
        state.withLock { state in
            let stale = deliveries.filter { state.deliveries[$0]?.claim != claim }
            guard stale.isEmpty else { return stale }
            for delivery in deliveries {
                guard let done = state.deliveries.removeValue(forKey: delivery) else { continue }
                state.open[done.subscriber]?.removeAll { $0 == delivery }
            }
            return []
        }
    }

    func retry(_ delivery: Int64, claim: UUID, after delay: Duration, error: String) {
        let now = clock.now()
        update(delivery, claim: claim) {
            $0.dueAt = now + delay
            $0.lastError = error
        }
    }

    func park(_ delivery: Int64, claim: UUID, error: String) {
        update(delivery, claim: claim) {
            $0.reason = .parked
            $0.lastError = error
        }
    }

    func release(_ deliveries: [Int64], claim: UUID) {
        for delivery in deliveries {
            update(delivery, claim: claim) { $0.attempts -= 1 }
        }
    }

    func undelivered(limit: Int) -> [UndeliveredEvent] {
        state.withLock { state in
            let waiting = state.deliveries.keys.sorted().compactMap { id -> UndeliveredEvent? in
                guard let delivery = state.deliveries[id], let reason = delivery.reason else { return nil }
                let event = delivery.event
                return UndeliveredEvent(
                    id: id, event: event.id, type: event.type, subscriber: delivery.subscriber,
                    sender: event.sender, publishedAt: event.publishedAt, attempts: delivery.attempts, reason: reason,
                    lastError: delivery.lastError)
            }
            return Array(waiting.prefix(limit))
        }
    }

    func resubmit(_ delivery: Int64) -> Bool {
        let now = clock.now()
        let (resubmitted, subscriber, watchers) = state.withLock {
            state -> (Bool, String, [@Sendable (String) -> Void]) in
            guard let waiting = state.deliveries[delivery], waiting.reason != nil,
                state.subscribers[waiting.subscriber] != nil
            else { return (false, "", []) }
            state.deliveries[delivery]?.reason = nil
            state.deliveries[delivery]?.attempts = 0
            state.deliveries[delivery]?.dueAt = now
            state.deliveries[delivery]?.lastError = ""
            return (true, waiting.subscriber, Array(state.watchers.values))
        }
        if resubmitted { for watcher in watchers { watcher(subscriber) } }
        return resubmitted
    }

    func abandon(module: ModuleID, reason: String) {
        state.withLock { state in
            let gone = state.subscribers.filter { $0.value.module == module }.map(\.key)
            for subscriber in gone {
                state.subscribers[subscriber] = nil
                for id in state.open[subscriber] ?? [] where state.deliveries[id]?.reason == nil {
                    state.deliveries[id]?.reason = .abandoned
                    state.deliveries[id]?.claimedUntil = nil
                    state.deliveries[id]?.claim = nil
                    state.deliveries[id]?.lastError = reason
                }
            }
        }
    }

    func handlersWithPendingDeliveries() -> [RecordedHandler] {
        let now = clock.now()
        return state.withLock { state in
            state.subscribers.keys.sorted().compactMap { subscriber in
                guard let handler = state.subscribers[subscriber] else { return nil }
                let pending = (state.open[subscriber] ?? []).count { state.deliveries[$0]?.reason == nil }
                guard pending > 0 else { return nil }
                return RecordedHandler(
                    subscriber: subscriber, module: handler.module, pending: pending,
                    idle: now - (state.lastRun[subscriber] ?? now), runElsewhere: false)
            }
        }
    }

    func abandon(subscriber: String, reason: String) {
        state.withLock { state in
            state.subscribers[subscriber] = nil
            for id in state.open[subscriber] ?? [] where state.deliveries[id]?.reason == nil {
                state.deliveries[id]?.reason = .abandoned
                state.deliveries[id]?.claimedUntil = nil
                state.deliveries[id]?.claim = nil
                state.deliveries[id]?.lastError = reason
            }
        }
    }

    func watch(_ onAppend: @escaping @Sendable (String) -> Void) -> StoreWatch {
        let token = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = onAppend
            return state.nextWatcher
        }
        return StoreWatch { [weak self] in self?.state.withLock { _ = $0.watchers.removeValue(forKey: token) } }
    }

    /// Changes `delivery` when `claim` still holds it, and ends the claim.
    private func update(_ delivery: Int64, claim: UUID, _ change: (inout Delivery) -> Void) {
        state.withLock { state in
            guard var updated = state.deliveries[delivery], updated.claim == claim else { return }
            change(&updated)
            updated.claim = nil
            updated.claimedUntil = nil
            state.deliveries[delivery] = updated
        }
    }
}
