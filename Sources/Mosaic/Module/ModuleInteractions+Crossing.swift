package import Foundation

// What moves shared state and events across the boundary of an isolated module's process. Values cross as JSON;
// only the side that declared a key or an event type knows its Swift type, so each declaration carries the typed
// code that encodes, decodes and applies its values, for either side to call by the key's or type's name.

/// How one declared state key's values cross: the child keeps a mirror of the key, and writes as the expected
/// value (what its mirror held) and the new one, which the host applies only if it still holds the expected value.
package struct StateKeyCrossing: Sendable {
    /// The key's value in `store` now, encoded; `nil` when it does not encode.
    package let encoded: @Sendable (_ store: any StateAccess) -> Data?
    /// Puts the encoded `value` in `mirror`; `false` when it does not decode.
    package let mirror: @Sendable (_ value: Data, _ mirror: any StateMirroring) -> Bool
    /// Writes `value` to `store` as `writer`, if the key still holds `expected`; otherwise throws ``StaleMirror``.
    package let write:
        @Sendable (_ expected: Data, _ value: Data, _ store: any StateAccess, _ writer: ModuleID) async throws -> Void
    /// Records in `transaction` the write of `value` if the key still holds `expected` when it commits; otherwise
    /// the commit throws ``StaleMirror`` after calling `stale`.
    package let stage:
        @Sendable (
            _ expected: Data, _ value: Data, _ stale: @escaping @Sendable () -> Void,
            _ transaction: inout StateTransaction
        ) throws -> Void
    /// Observes the key in `store` now, and returns the work that calls `changed` each time its value changes (and
    /// once at first), until cancelled: no change after the call is missed, however late the work starts.
    package let follow:
        @Sendable (_ store: any StateAccess, _ changed: @escaping @Sendable () -> Void) -> @Sendable () async -> Void

    init<Value>(_ key: StateKey<Value>) {
        encoded = { store in try? JSONEncoder().encode(store.read(key)) }
        mirror = { data, mirror in
            guard let value = try? JSONDecoder().decode(Value.self, from: data) else { return false }
            mirror.mirror(value, for: key)
            return true
        }
        write = { expected, value, store, writer in
            let change = try Self.change(key, from: expected, to: value, stale: {})
            try await store.write(key, as: writer, change)
        }
        stage = { expected, value, stale, transaction in
            transaction.update(key, try Self.change(key, from: expected, to: value, stale: stale))
        }
        follow = { store, changed in
            let values = store.values(of: key)
            return { for await _ in values { changed() } }
        }
    }

    /// The change that sets `key` to `value`, refusing when the key no longer holds `expected`.
    private static func change<Value>(
        _ key: StateKey<Value>, from expected: Data, to value: Data, stale: @escaping @Sendable () -> Void
    ) throws -> @Sendable (inout Value) throws -> Void {
        let decoder = JSONDecoder()
        guard let expected = try? decoder.decode(Value.self, from: expected),
            let value = try? decoder.decode(Value.self, from: value)
        else {
            throw StateError(
                .invalid, "A value of \(key.id) from the module's process does not decode as \(Value.self).")
        }
        return { current in
            guard current == expected else {
                stale()
                throw StaleMirror()
            }
            current = value
        }
    }
}

/// A write from an isolated module's process was computed from a value its mirror no longer has: the child takes
/// the current one and runs its change again.
package struct StaleMirror: Error, Sendable {}

/// Where an isolated module's process keeps its mirror of shared state: its kernel's state hub.
package protocol StateMirroring: Sendable {
    /// Makes `value` the value of `key` here, telling observers when it changed.
    func mirror<Value>(_ value: Value, for key: StateKey<Value>)
}

/// An event type a module declared it publishes or subscribes to, typed, so that its events can cross.
package struct DeclaredEventType: Sendable, Hashable {
    /// The type's qualified name, as the declarations list it.
    package let name: String
    /// How its durable publishes and deliveries cross, when it is a ``DurableEvent``.
    package let durable: DurableCrossing?
    /// Decodes `event` and publishes it on `bus` as `sender`.
    package let publish: @Sendable (_ event: Data, _ bus: any EventBus, _ sender: ModuleID) throws -> Void
    /// Decodes `event` and hands it to `relay`'s subscribers as sent by `sender`.
    package let relay: @Sendable (_ event: Data, _ relay: any EventRelaying, _ sender: ModuleID) -> Bool
    /// Subscribes to the type on `bus` as `subscriber` now, and returns the work that calls `deliver` with each
    /// event, encoded (`nil` when it does not encode), and its sender, until cancelled or the subscription ends.
    package let forward:
        @Sendable (
            _ bus: any EventBus, _ subscriber: ModuleID, _ deliver: @escaping @Sendable (Data?, ModuleID) -> Void
        ) -> @Sendable () async -> Void

    init<Event: Codable & Sendable>(_ type: Event.Type) {
        name = qualifiedTypeName(type)
        durable = (type as? any DurableEvent.Type).map { DurableCrossing($0) }
        publish = { data, bus, sender in
            let event: Event
            do {
                event = try JSONDecoder().decode(Event.self, from: data)
            } catch {
                throw EventError(.invalid, "An event \(Event.self) from \(sender)'s process does not decode: \(error)")
            }
            try bus.publish(event, from: sender)
        }
        relay = { data, relay, sender in
            guard let event = try? JSONDecoder().decode(Event.self, from: data) else { return false }
            relay.relay(event, from: sender)
            return true
        }
        forward = { bus, subscriber, deliver in
            let events = bus.subscribe(Event.self, subscriber: subscriber, buffer: 256)
            return {
                for await envelope in events { deliver(try? JSONEncoder().encode(envelope.event), envelope.sender) }
            }
        }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// Where an isolated module's process hands on the events its host forwards: its kernel's event hub, to the
/// module's subscriptions there.
package protocol EventRelaying: Sendable {
    /// Hands `event` to this side's subscribers of its type, stamped with `sender`, who publishes on the other side.
    func relay<Event: Sendable>(_ event: Event, from sender: ModuleID)
}
