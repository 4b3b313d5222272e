internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// The kernel's side of durable events: records published ones in the store, registers handlers, and runs each
/// running handler's deliveries.
final class DurableOutbox: Sendable {
    let store: any DurableEventStore
    let options: DurableEventOptions
    let clock: KernelClock
    let telemetry: Telemetry
    private let logger = Logger(label: "mosaic.durable-events")
    /// The handlers running on this instance, as `module/name`.
    private let running = Mutex<Set<String>>([])

    init(store: any DurableEventStore, options: DurableEventOptions, clock: KernelClock, telemetry: Telemetry) {
        self.store = store
        self.options = options.normalized
        self.clock = clock
        self.telemetry = telemetry
    }

    /// Puts `event` into the outbox, for every handler of its type; returns once it is stored.
    func append<Event: DurableEvent>(_ event: Event, from sender: ModuleID) throws(EventError) {
        let outgoing = try encode(event, from: sender)
        do {
            try store.append(id: outgoing.id, type: outgoing.type, payload: outgoing.payload, sender: sender)
        } catch {
            throw EventError(
                "\(Event.durableName) from \(sender) may not have been put into the outbox: \(error). If the storage "
                    + "answered nothing, the event may still have been stored; publishing again then sends it twice, "
                    + "under a new id.")
        }
    }

    /// `event` as the outbox keeps it, with a new identifier.
    func encode<Event: DurableEvent>(_ event: Event, from sender: ModuleID) throws(EventError) -> OutboxEvent {
        do {
            return OutboxEvent(
                id: UUID(), type: Event.durableName, payload: try JSONEncoder().encode(event), sender: sender)
        } catch {
            throw EventError("\(Event.durableName) from \(sender) could not be encoded as JSON: \(error).")
        }
    }

    /// Registers `module`'s handler `name` and returns the work that hands it its deliveries until cancelled,
    /// running `handler` through `call` (the module's services and calls).
    func register<Event: DurableEvent>(
        _ type: Event.Type, module: ModuleID, name: String,
        call: @escaping @Sendable (@Sendable () async throws -> Void) async throws -> Void,
        handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> Void
    ) throws(EventError) -> (work: @Sendable () async -> Void, end: @Sendable () -> Void) {
        let subscriber = "\(module.rawValue)/\(name)"
        guard running.withLock({ $0.insert(subscriber).inserted }) else {
            throw EventError(
                "\(module) already has a durable handler named \(name.quotedForMessage()); name each one once.")
        }
        do {
            try store.subscribe(subscriber, module: module, to: Event.durableName)
        } catch {
            running.withLock { _ = $0.remove(subscriber) }
            throw EventError(
                "\(module)'s handler \(name.quotedForMessage()) of \(Event.durableName) could not be recorded in the "
                    + "outbox: \(error). Activate the module again once the outbox's storage is reachable.")
        }
        let dispatcher = DurableDispatcher(
            outbox: self, subscriber: subscriber, logger: Logger(label: module.rawValue),
            deliver: { delivery in try await call { try await handler(try Self.envelope(delivery, as: Event.self)) } })
        return (dispatcher.run, { self.running.withLock { _ = $0.remove(subscriber) } })
    }

    /// `delivery`'s event, decoded as `type`.
    private static func envelope<Event: DurableEvent>(_ delivery: DurableDelivery, as type: Event.Type) throws
        -> DurableEnvelope<Event>
    {
        let event: Event
        do {
            event = try JSONDecoder().decode(Event.self, from: delivery.payload)
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
