package import Foundation

// What moves a durable event type across the boundary of an isolated module's process. The host keeps the outbox:
// a handler the module registers in its process is registered in the host as the module, and each delivery is a
// call to the process, completed only once the process answers; what a transactional handler records comes back
// with the answer and commits in the host with the delivery. A process that ends mid-delivery answers nothing, so
// the delivery is handed back and runs again, as after a crash in process.

/// How one durable event type's publishes and deliveries cross, typed where the module declared the type.
package struct DurableCrossing: Sendable {
    /// Decodes `events` and puts them into the outbox on `bus` as `sender`, in one commit.
    package let publish: @Sendable (_ events: [Data], _ bus: any EventBus, _ sender: ModuleID) async throws -> Void
    /// Registers on `bus`, as `subscriber`'s handler `name`, a handler that hands each delivery, encoded, to
    /// `deliver`; with `record`, a transactional one that records what `deliver` answers in the delivery's
    /// transaction.
    package let handle:
        @Sendable (
            _ bus: any EventBus, _ subscriber: ModuleID, _ name: String,
            _ record: (@Sendable (_ answer: Data?, _ transaction: inout StateTransaction) throws -> Void)?,
            _ deliver: @escaping @Sendable (_ envelope: Data) async throws -> Data?
        ) async throws -> Void
    /// Decodes `event` and records its publish in `transaction`.
    package let stage: @Sendable (_ event: Data, _ transaction: inout StateTransaction) throws -> Void

    init<Event: DurableEvent>(_ type: Event.Type) {
        publish = { data, bus, sender in
            try await bus.publish(
                contentsOf: try data.map { try Self.decode(Event.self, $0, from: sender) }, from: sender)
        }
        handle = { bus, subscriber, name, record, deliver in
            guard let record else {
                try await bus.handle(Event.self, subscriber: subscriber, name: name) { envelope in
                    _ = try await deliver(CrossingEnvelope(envelope).encoded())
                }
                return
            }
            try await bus.handle(Event.self, subscriber: subscriber, name: name) { envelope, transaction in
                try record(try await deliver(CrossingEnvelope(envelope).encoded()), &transaction)
            }
        }
        stage = { data, transaction in transaction.publish(try Self.decode(Event.self, data, from: nil)) }
    }

    private static func decode<Event: DurableEvent>(_ type: Event.Type, _ data: Data, from sender: ModuleID?) throws
        -> Event
    {
        do {
            return try JSONDecoder().decode(Event.self, from: data)
        } catch {
            let source = sender.map { "\($0)'s process" } ?? "a module's process"
            throw EventError(.invalid, "An event \(Event.self) from \(source) does not decode: \(error)")
        }
    }
}

/// A durable event's delivery as it crosses to the handling module's process: the envelope, with the event encoded.
package struct CrossingEnvelope: Codable, Sendable {
    let id: UUID
    let attempt: Int
    let sender: String
    let publishedAt: Date
    let event: Data

    init<Event: DurableEvent>(_ envelope: DurableEnvelope<Event>) throws {
        id = envelope.id
        attempt = envelope.attempt
        sender = envelope.sender.rawValue
        publishedAt = envelope.publishedAt
        event = try JSONEncoder().encode(envelope.event)
    }

    func encoded() throws -> Data { try JSONEncoder().encode(self) }

    /// The envelope a handler of `Event` gets from `data`, sent by the host.
    package static func decode<Event: DurableEvent>(_ data: Data, as type: Event.Type) throws -> DurableEnvelope<Event>
    {
        let crossing = try JSONDecoder().decode(Self.self, from: data)
        return DurableEnvelope(
            id: crossing.id, attempt: crossing.attempt, sender: ModuleID(crossing.sender),
            publishedAt: crossing.publishedAt, event: try JSONDecoder().decode(Event.self, from: crossing.event))
    }
}
