internal import Foundation
internal import Mosaic

// The hubs as one module sees them, through its ledger: what the module subscribes to ends when the ledger is
// withdrawn, and its handles refuse to write or publish once it is closed. The kernel gives a module nothing else.

/// Shared state as a module sees it.
struct ModuleStateAccess: StateAccess {
    let hub: StateHub
    let ledger: ModuleLedger
    /// The keys the module declared it writes (`module.writes`): the only ones it may write.
    let declaredWrites: Set<String>

    func read<Value>(_ key: StateKey<Value>) -> Value {
        hub.read(key, by: ledger.module)
    }

    func load<Value>(_ key: StateKey<Value>) async {
        await hub.load(key)
    }

    func write<Value>(
        _ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void
    ) async throws {
        guard ledger.isOpen else {
            throw StateError(
                .inactive,
                "\(writer) is not active, so it may no longer write \(key.id): its right to write shared state was "
                    + "withdrawn when it deactivated. Write from code that runs while it is active (activate, its "
                    + "handlers, context.task).")
        }
        try checkDeclared(key.id, by: writer)
        try await hub.write(key, as: writer, update)
    }

    func values<Value>(of key: StateKey<Value>) -> Feed<Value> {
        ledger.adopt(hub.subscription(of: key, by: ledger.module))
    }

    func commit(_ transaction: StateTransaction, as writer: ModuleID) async throws {
        guard ledger.isOpen else {
            throw StateError(
                .inactive,
                "\(writer) is not active, so it may no longer write shared state or publish; nothing was written.")
        }
        try await commit(transaction, as: writer, completing: nil)
    }

    /// Commits the transactions a durable handler recorded for deliveries of `claim`, as `writer`, each with its
    /// delivery's completion: all in one commit, and again without those whose claim ran out (stale); when a
    /// change of one of them throws, each alone, so that one delivery's fault is its own. A storage that does not
    /// answer fails them all (their claims lapse, and they come again).
    func commit(
        _ recorded: [(delivery: Int64, transaction: StateTransaction)], claim: UUID, as writer: ModuleID
    ) async -> [Int64: Result<Void, any Error>] {
        var outcomes: [Int64: Result<Void, any Error>] = [:]
        var pending = recorded
        while !pending.isEmpty {
            do {
                try await commit(
                    StateTransaction(merging: pending.map(\.transaction)), as: writer,
                    completing: DeliveryCompletion(deliveries: pending.map(\.delivery), claim: claim))
                for (delivery, _) in pending { outcomes[delivery] = .success(()) }
                return outcomes
            } catch let stale as StaleDelivery {
                for delivery in stale.deliveries { outcomes[delivery] = .failure(stale) }
                pending.removeAll { stale.deliveries.contains($0.delivery) }
            } catch let error as StateError where pending.count == 1 || Self.failsEveryone.contains(error.code) {
                for (delivery, _) in pending { outcomes[delivery] = .failure(error) }
                return outcomes
            } catch  where pending.count > 1 {
                for (delivery, transaction) in pending {
                    outcomes[delivery] = await commit([(delivery, transaction)], claim: claim, as: writer)[delivery]
                }
                return outcomes
            } catch {
                outcomes[pending[0].delivery] = .failure(error)
                return outcomes
            }
        }
        return outcomes
    }

    /// The failures of a commit that committing each transaction alone would meet again.
    static let failsEveryone: Set<StateError.Code> = [.notRunning, .inactive, .unavailable, .contended]

    /// Commits `transaction` as `writer` and, with `completing`, a durable handler's deliveries with it.
    func commit(_ transaction: StateTransaction, as writer: ModuleID, completing: DeliveryCompletion?) async throws {
        guard ledger.isOpen else {
            throw StateError(
                .inactive,
                "\(writer) is not active, so it may no longer write shared state or publish; nothing was written.")
        }
        for write in transaction.writes { try checkDeclared(write.id, by: writer) }
        try await hub.commit(transaction, as: writer, completing: completing)
    }

    /// Refuses a write of key `id` the module did not declare: what it writes is part of its contract, checked
    /// before anything runs and shown on its canvas.
    func checkDeclared(_ id: String, by writer: ModuleID) throws {
        guard !declaredWrites.contains(id) else { return }
        throw Self.undeclaredWrite(of: id, by: writer)
    }

    /// The refusal of a write of key `id` that `writer` did not declare, the same in process and isolated.
    static func undeclaredWrite(of id: String, by writer: ModuleID) -> StateError {
        StateError(
            .notAllowed,
            "\(writer) did not declare that it writes \(id), so the write was refused; nothing was written. Declare "
                + "it in register(in:): module.writes(key).")
    }

    /// The refusal of a write by `writer` once it is no longer active.
    static func inactiveWrite(by writer: ModuleID) -> StateError {
        StateError(
            .inactive,
            "\(writer) is not active, so it may no longer write shared state or publish; nothing was written.")
    }
}

/// The event bus as a module sees it.
struct ModuleEventBus: EventBus {
    let hub: EventHub
    let ledger: ModuleLedger
    let services: Services
    /// Where a durable handler's transaction commits, with the module's right to write.
    let state: ModuleStateAccess

    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError) {
        guard ledger.isOpen else { throw Self.inactive(sender, Event.self) }
        try hub.publish(event, from: sender)
    }

    func publish<Event: DurableEvent>(contentsOf events: [Event], from sender: ModuleID) async throws(EventError) {
        guard ledger.isOpen else { throw Self.inactive(sender, Event.self) }
        try await hub.publish(contentsOf: events, from: sender)
    }

    private static func inactive<Event>(_ sender: ModuleID, _ type: Event.Type) -> EventError {
        EventError(
            .inactive,
            "\(sender) is not active, so it cannot publish \(Event.self); events come only from active modules.")
    }

    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber: ModuleID, buffer: Int
    ) -> Feed<EventEnvelope<Event>> {
        ledger.adopt(hub.subscription(type, subscriber: subscriber, buffer: buffer))
    }

    func startProcessing<Event: Sendable>(
        _ envelope: EventEnvelope<Event>, subscriber: ModuleID
    ) -> (any EventProcessing)? {
        hub.startProcessing(envelope, subscriber: subscriber)
    }

    /// Registers the handler and runs its deliveries as the module's work: it stops when the module deactivates,
    /// and the module's `deactivate()` waits for it.
    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> Void
    ) async throws(EventError) {
        try await register(type, subscriber: subscriber, name: name, commit: nil) { envelope in
            try await handler(envelope)
            return .handled
        }
    }

    /// Registers the handler as the one without a transaction, then commits each delivery's transaction with its
    /// completion.
    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        transactional handler: @escaping @Sendable (DurableEnvelope<Event>, inout StateTransaction) async throws -> Void
    ) async throws(EventError) {
        let state = state
        let commit: RecordedCommit = { recorded, claim in await state.commit(recorded, claim: claim, as: subscriber) }
        try await register(type, subscriber: subscriber, name: name, commit: commit) { envelope in
            var transaction = StateTransaction()
            try await handler(envelope, &transaction)
            return .recorded(transaction)
        }
    }

    private func register<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String, commit: RecordedCommit?,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> DeliveryOutcome
    ) async throws(EventError) {
        guard ledger.isOpen else {
            throw EventError(
                .inactive, "\(subscriber) is not active, so it cannot start handling \(Event.durableName).")
        }
        let services = services
        let (work, end) = try await hub.outbox.register(
            type, module: subscriber, name: name, call: { body in try await services.call(body) }, commit: commit,
            handler: handler)
        ledger.hold(.rest, end)
        guard ledger.task(work) else {
            throw EventError(
                .inactive, "\(subscriber) is deactivating, so it cannot start handling \(Event.durableName).")
        }
    }
}

/// Every module's contributions, as a module sees them. The store is reached through a weak reference: contributions
/// the store keeps hold their module's context, and through it this view, which must not keep the store alive in
/// turn.
struct ModuleContributionSource: ContributionSource {
    let store: WeakContributionHub
    let ledger: ModuleLedger

    func contributions<Content>(for point: ExtensionPoint<Content>) -> [Contribution<Content>] {
        store.store?.contributions(for: point) ?? []
    }

    func updates<Content>(of point: ExtensionPoint<Content>) -> Feed<[Contribution<Content>]> {
        guard let subscription = store.store?.subscription(of: point) else { return .ended }
        return ledger.adopt(subscription)
    }
}

/// A kernel's contribution store, held weakly, once for every module's view: a view holding a weak reference itself
/// could not be stored in an existential's inline buffer, and cost each module an allocation.
final class WeakContributionHub: Sendable {
    weak let store: ContributionHub?

    init(_ store: ContributionHub) {
        self.store = store
    }
}

extension ModuleLedger {
    /// Ties `subscription`'s feed to the module: it ends when the ledger is withdrawn (at once if it was), and
    /// the ledger forgets it when its reader drops it first.
    func adopt<Element>(_ subscription: Subscription<Element>) -> Feed<Element> {
        if let token = hold(.rest, subscription.cancel) {
            subscription.ended.whenEnded { [weak self] in self?.release(token) }
        }
        return subscription.feed
    }
}
