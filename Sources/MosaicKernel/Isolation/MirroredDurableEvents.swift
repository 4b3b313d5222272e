internal import Foundation
internal import Mosaic

// Durable events as an isolated module sees them in its process. The host keeps the outbox: a publish is a request
// the host makes as the module, a handler is registered in the host as the module and kept here, where the host
// sends each delivery and completes it once the handler has answered.

extension MirroredEventBus {
    func publish<Event: DurableEvent>(contentsOf events: [Event], from sender: ModuleID) async throws(EventError) {
        try checkActive(sender, Event.self)
        let name = try declared(
            Event.self, in: sharing.published, by: sender, as: "module.publishes(\(Event.self).self)")
        let encoded: [Data]
        do {
            encoded = try events.map { try JSONEncoder().encode($0) }
        } catch {
            throw EventError(
                .invalid, "An event \(Event.self) could not be encoded as JSON: \(error). Nothing was sent.")
        }
        try await request(.publish(type: name, events: encoded))
    }

    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> Void
    ) async throws(EventError) {
        try checkActive(subscriber, Event.self)
        sharing.keep(handler: name) { envelope, _ in
            try await handler(CrossingEnvelope.decode(envelope, as: Event.self))
            return nil
        }
        try await register(Event.self, subscriber: subscriber, name: name, transactional: false)
    }

    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        transactional handler: @escaping @Sendable (DurableEnvelope<Event>, inout StateTransaction) async throws -> Void
    ) async throws(EventError) {
        try checkActive(subscriber, Event.self)
        sharing.keep(handler: name) { [local, sharing] envelope, base in
            var transaction = StateTransaction()
            try await handler(CrossingEnvelope.decode(envelope, as: Event.self), &transaction)
            return try JSONEncoder().encode(
                Self.crossing(transaction, on: base, state: local.state, published: sharing.published, by: subscriber))
        }
        try await register(Event.self, subscriber: subscriber, name: name, transactional: true)
    }

    /// What a transactional handler recorded, as it crosses to the host: its changes run on `base` (the host's
    /// values, with what the deliveries before it recorded), each key's value before and after, and its events
    /// encoded. The host commits them with the delivery if the keys still hold the values the changes ran on;
    /// otherwise the attempt fails and the delivery runs again.
    private static func crossing(
        _ transaction: StateTransaction, on base: [String: Data], state: ModuleStateAccess, published: Set<String>,
        by module: ModuleID
    ) throws -> CrossingTransaction {
        for write in transaction.writes { try state.checkDeclared(write.id, by: module) }
        let staging = MirrorStaging(local: state, newer: base)
        for write in transaction.writes { try write.stage(staging) }
        let events = try transaction.events.map(CrossingEvent.init)
        for event in events where !published.contains(event.type) {
            throw EventError(
                .invalid,
                "\(module) runs in a process of its own, where a durable event reaches the outbox only if its type "
                    + "is declared: add module.publishes(\(event.type).self) to register(in:). Nothing was recorded.")
        }
        return CrossingTransaction(writes: staging.writes, events: events)
    }

    /// Asks the host to register the handler `name` kept here as the module's, in its outbox.
    private func register<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String, transactional: Bool
    ) async throws(EventError) {
        let type = try declared(
            Event.self, in: Set(sharing.subscribed.keys), by: subscriber,
            as: "module.subscribes(to: \(Event.self).self)")
        try await request(.handle(type: type, name: name, transactional: transactional))
    }

    private func checkActive<Event>(_ module: ModuleID, _ type: Event.Type) throws(EventError) {
        guard local.ledger.isOpen else {
            throw EventError(.inactive, "\(module) is not active, so it cannot publish or handle \(Event.self).")
        }
    }

    /// The qualified name of `type`, which the module must have declared (in `names`) for its events to cross.
    private func declared<Event>(
        _ type: Event.Type, in names: Set<String>, by module: ModuleID, as declaration: String
    ) throws(EventError) -> String {
        let name = qualifiedTypeName(type)
        guard names.contains(name) else {
            throw EventError(
                .invalid,
                "\(module) runs in a process of its own, where a durable event crosses to the host's outbox only if "
                    + "its type is declared: add \(declaration) to register(in:).")
        }
        return name
    }

    /// Sends `request` to the host, throwing what it refused as in process.
    private func request(_ request: BoundaryRequest) async throws(EventError) {
        let answer: BoundaryAnswer
        do {
            answer = try await sharing.request(request)
        } catch {
            throw EventError(.unavailable, "The host did not answer: \(error). Retry.")
        }
        switch answer {
        case .done: return
        case .eventError(let code, let message): throw EventError(EventError.Code(rawValue: code) ?? .invalid, message)
        case .stateError(_, let message): throw EventError(.invalid, message)
        case .stale: throw EventError(.invalid, "The host answered an event with state values.")
        }
    }
}
