internal import Mosaic

// The hubs as one module sees them, through its ledger: what the module subscribes to ends when the ledger is
// withdrawn, and its handles refuse to write or publish once it is closed. The kernel gives a module nothing else.

/// Shared state as a module sees it.
struct ModuleStateStore: StateStore {
    let hub: StateHub
    let ledger: ModuleLedger
    /// The keys the module declared it writes (`module.writes`): the only ones it may write.
    let declaredWrites: Set<String>

    func read<Value>(_ key: StateKey<Value>) -> Value {
        hub.read(key)
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
        ledger.adopt(hub.subscription(of: key))
    }

    func commit(_ transaction: StateTransaction, as writer: ModuleID) async throws {
        guard ledger.isOpen else {
            throw StateError(
                .inactive,
                "\(writer) is not active, so it may no longer write shared state or publish; nothing was written.")
        }
        try await commit(transaction, as: writer, completing: nil)
    }

    /// Commits `transaction` as `writer` and, with `completing`, a durable handler's delivery with it.
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
    private func checkDeclared(_ id: String, by writer: ModuleID) throws {
        guard !declaredWrites.contains(id) else { return }
        throw StateError(
            .notAllowed,
            "\(writer) did not declare that it writes \(id), so the write was refused; nothing was written. Declare "
                + "it in register(in:): module.writes(key).")
    }
}

/// The event bus as a module sees it.
struct ModuleEventBus: EventBus {
    let hub: EventHub
    let ledger: ModuleLedger
    let services: Services
    /// Where a durable handler's transaction commits, with the module's right to write.
    let state: ModuleStateStore

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
        try await register(type, subscriber: subscriber, name: name) { envelope, _ in
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
        try await register(type, subscriber: subscriber, name: name) { envelope, completion in
            var transaction = StateTransaction()
            try await handler(envelope, &transaction)
            try await state.commit(transaction, as: subscriber, completing: completion)
            return .completed
        }
    }

    private func register<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>, DeliveryCompletion) async throws -> DeliveryOutcome
    ) async throws(EventError) {
        guard ledger.isOpen else {
            throw EventError(
                .inactive, "\(subscriber) is not active, so it cannot start handling \(Event.durableName).")
        }
        let services = services
        let (work, end) = try await hub.outbox.register(
            type, module: subscriber, name: name, call: { body in try await services.call(body) }, handler: handler)
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
    let store: WeakContributionStore
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
final class WeakContributionStore: Sendable {
    weak let store: ContributionStore?

    init(_ store: ContributionStore) {
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
