internal import Mosaic
internal import Synchronization

/// The kernel's event bus: typed fan-out from active modules to subscribers, each with a bounded buffer that drops
/// its oldest event rather than make a publisher wait.
final class EventHub: EventBus {
    private struct Subscriber {
        let module: ModuleID
        let yield: @Sendable (UInt64, ModuleID, any Sendable) -> Void
        let finish: @Sendable () -> Void
    }

    private struct State {
        /// Subscribers by event type, then by token.
        var subscribers: [ObjectIdentifier: [Int: Subscriber]] = [:]
        var sequences: [ObjectIdentifier: UInt64] = [:]
        /// The modules that may publish: the active ones, and the host.
        var publishers: Set<ModuleID> = [EventHub.host]
        var nextToken = 0
        var finished = false
    }

    /// The sender stamped on events the host publishes.
    static let host: ModuleID = "mosaic.host"

    private let state = Mutex(State())

    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError) {
        let type = ObjectIdentifier(Event.self)
        let accepted = state.withLock { state -> Bool in
            guard state.publishers.contains(sender) else { return false }
            let sequence = state.sequences[type, default: 0] + 1
            state.sequences[type] = sequence
            // Yielding inside the lock keeps every subscriber's order the publishing order; a yield never waits.
            for subscriber in state.subscribers[type]?.values ?? [:].values {
                subscriber.yield(sequence, sender, event)
            }
            return true
        }
        guard accepted else {
            throw EventError(
                "\(sender) is not active, so it cannot publish \(Event.self); events come only from active modules.")
        }
    }

    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber module: ModuleID, buffer: Int
    ) -> AsyncStream<EventEnvelope<Event>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: EventEnvelope<Event>.self, bufferingPolicy: .bufferingNewest(max(1, buffer)))
        let key = ObjectIdentifier(Event.self)
        let subscriber = Subscriber(
            module: module,
            yield: { sequence, sender, event in
                if let event = event as? Event {
                    continuation.yield(EventEnvelope(sender: sender, event: event, sequence: sequence))
                }
            }, finish: { continuation.finish() })
        let token: Int? = state.withLock { state in
            guard !state.finished, state.publishers.contains(module) else { return nil }
            defer { state.nextToken += 1 }
            state.subscribers[key, default: [:]][state.nextToken] = subscriber
            return state.nextToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers[key]?.removeValue(forKey: token) }
        }
        return stream
    }

    /// Lets `module` publish and subscribe.
    func activate(_ module: ModuleID) {
        state.withLock { _ = $0.publishers.insert(module) }
    }

    /// Stops `module` publishing and ends its subscriptions.
    func deactivate(_ module: ModuleID) {
        let ended = state.withLock { state in
            state.publishers.remove(module)
            var ended: [Subscriber] = []
            for type in state.subscribers.keys {
                let mine = state.subscribers[type]?.filter { $0.value.module == module } ?? [:]
                for token in mine.keys { state.subscribers[type]?[token] = nil }
                ended += mine.values
            }
            return ended
        }
        for subscriber in ended { subscriber.finish() }
    }

    /// Ends every subscription: the kernel shut down.
    func finish() {
        let ended = state.withLock { state in
            state.finished = true
            state.publishers = []
            defer { state.subscribers = [:] }
            return state.subscribers.values.flatMap(\.values)
        }
        for subscriber in ended { subscriber.finish() }
    }
}
