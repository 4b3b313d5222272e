internal import Foundation
internal import Logging
internal import Mosaic

// Shared state and events as a module sees them in a process of its own. Its code is the same as in process:
// reads and observers are served from its kernel's hub, which mirrors the host's values; writes and publishes go to
// the host, which applies them as the module with the same rules.

/// Shared state in an isolated module's process: reads from the mirror, writes made by the host.
struct MirroredStateAccess: StateAccess {
    let local: ModuleStateAccess
    let sharing: ChildSharing

    /// How many times a write runs its change on newer values the host sent back before it gives up.
    static let maximumAttempts = 16

    func read<Value>(_ key: StateKey<Value>) -> Value { local.read(key) }

    func load<Value>(_ key: StateKey<Value>) async { await local.load(key) }

    func values<Value>(of key: StateKey<Value>) -> Feed<Value> { local.values(of: key) }

    func write<Value>(
        _ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void
    ) async throws {
        guard local.ledger.isOpen else { throw ModuleStateAccess.inactiveWrite(by: writer) }
        try local.checkDeclared(key.id, by: writer)
        var base = local.read(key)
        for _ in 0..<Self.maximumAttempts {
            var value = base
            try update(&value)
            let expected = try encode(base, of: key)
            let stale = try await send([MirroredWrite(key: key.id, expected: expected, value: encode(value, of: key))])
            guard !stale.isEmpty else { return }
            guard let newer = stale[key.id] else { break }
            base = try decode(newer, of: key)
        }
        throw contended(writer)
    }

    func commit(_ transaction: StateTransaction, as writer: ModuleID) async throws {
        guard local.ledger.isOpen else { throw ModuleStateAccess.inactiveWrite(by: writer) }
        guard transaction.events.isEmpty else {
            throw StateError(
                .invalid,
                "\(writer) runs in a process of its own, where a transaction cannot publish durable events yet; "
                    + "nothing was written. Publish them after it commits, or run \(writer) in process.")
        }
        for write in transaction.writes { try local.checkDeclared(write.id, by: writer) }
        var newer: [String: Data] = [:]
        for _ in 0..<Self.maximumAttempts {
            let staging = MirrorStaging(local: local, newer: newer)
            for write in transaction.writes { try write.stage(staging) }
            let stale = try await send(staging.writes)
            guard !stale.isEmpty else { return }
            newer.merge(stale) { _, new in new }
        }
        throw contended(writer)
    }

    /// Sends `writes` to the host: nothing when it made them, or the values it holds instead of those expected.
    private func send(_ writes: [MirroredWrite]) async throws -> [String: Data] {
        switch try await sharing.request(.write(writes)) {
        case .done: return [:]
        case .stale(let newer): return newer
        case .stateError(let code, let message): throw StateError(StateError.Code(rawValue: code) ?? .invalid, message)
        case .eventError(_, let message): throw StateError(.invalid, message)
        }
    }

    private func contended(_ writer: ModuleID) -> StateError {
        StateError(.contended, "The keys \(writer) writes kept changing while it wrote; nothing was written. Retry.")
    }
}

/// Runs a transaction's changes on the mirror's values (or the newer ones the host sent back), recording each key's
/// value before and after.
final class MirrorStaging: TransactionStaging {
    let local: ModuleStateAccess
    let newer: [String: Data]
    private var order: [String] = []
    private var expected: [String: Data] = [:]
    private var staged: [String: (value: any Sendable, encoded: Data)] = [:]

    init(local: ModuleStateAccess, newer: [String: Data]) {
        self.local = local
        self.newer = newer
    }

    var writes: [MirroredWrite] {
        order.compactMap { key in
            guard let expected = expected[key], let value = staged[key]?.encoded else { return nil }
            return MirroredWrite(key: key, expected: expected, value: value)
        }
    }

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        var value: Value
        if let earlier = staged[key.id]?.value as? Value {
            value = earlier
        } else {
            value = try newer[key.id].map { try decode($0, of: key) } ?? local.read(key)
            expected[key.id] = try encode(value, of: key)
            order.append(key.id)
        }
        try change(&value)
        staged[key.id] = (value, try encode(value, of: key))
    }
}

func encode<Value>(_ value: Value, of key: StateKey<Value>) throws -> Data {
    do {
        return try JSONEncoder().encode(value)
    } catch {
        throw StateError(.invalid, "\(key.id) could not be encoded as JSON: \(error). Its value is unchanged.")
    }
}

private func decode<Value>(_ data: Data, of key: StateKey<Value>) throws -> Value {
    do {
        return try JSONDecoder().decode(Value.self, from: data)
    } catch {
        throw StateError(.invalid, "The host's value of \(key.id) does not decode as \(Value.self): \(error).")
    }
}

/// Events in an isolated module's process: published to the host's hub, received from it.
struct MirroredEventBus: EventBus {
    let local: ModuleEventBus
    let sharing: ChildSharing

    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError) {
        // A durable event is refused here as in process (publish it with `await`); the hub says so.
        if event is any DurableEvent { try local.publish(event, from: sender) }
        guard local.ledger.isOpen else {
            throw EventError(.inactive, "\(sender) is not active, so it cannot publish \(Event.self).")
        }
        let name = qualifiedTypeName(Event.self)
        guard sharing.published.contains(name), let encodable = event as? any Encodable,
            let data = try? JSONEncoder().encode(encodable)
        else {
            throw EventError(
                .invalid,
                "\(sender) runs in a process of its own, where an event reaches other modules only if its type is "
                    + "Codable and declared: add module.publishes(\(Event.self).self) to register(in:).")
        }
        sharing.publish(name, data)
    }

    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber: ModuleID, buffer: Int
    ) -> Feed<EventEnvelope<Event>> {
        let name = qualifiedTypeName(type)
        if sharing.subscribed[name] == nil {
            sharing.logger.warning(
                "an isolated module subscribed to events of a type it did not declare, so none reach it",
                metadata: ["module": "\(subscriber)", "type": "\(name)", "fix": "module.subscribes(to: \(name).self)"])
        }
        return local.subscribe(type, subscriber: subscriber, buffer: buffer)
    }

    func startProcessing<Event: Sendable>(
        _ envelope: EventEnvelope<Event>, subscriber: ModuleID
    ) -> (any EventProcessing)? {
        local.startProcessing(envelope, subscriber: subscriber)
    }
}
