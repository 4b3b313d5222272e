internal import CoreMetrics
internal import Mosaic
internal import Synchronization
internal import Tracing

/// The kernel's event bus: typed fan-out from active modules to subscribers, each with a bounded buffer that drops
/// its oldest event rather than make a publisher wait. A module's subscriptions end with its ledger.
///
/// Each event type has one channel, made on the type's first publish or subscription: its count of events so far
/// and its list of subscribers. A publish builds the subscribers' `EventEnvelope` once and hands that one value to
/// every subscriber's mailbox, so a delivery does no per-subscriber conversion and no generic-metadata lookup.
final class EventHub: EventBus {
    /// The events of one type.
    private struct Channel {
        /// Events of the type published so far: the last one's sequence number.
        var published: UInt64 = 0
        /// Every subscriber of the type; elements are the type's `EventEnvelope`s.
        let subscribers = Broadcast<any Sendable>()

        /// Numbers the next event and hands what `envelope` makes of its number to every subscriber.
        mutating func publish(_ envelope: (_ sequence: UInt64) -> any Sendable) {
            published += 1
            subscribers.send(envelope(published))
        }
    }

    private struct State {
        /// A channel per event type.
        var channels: [ObjectIdentifier: Channel] = [:]
        /// The modules that may publish: the active ones, and the host.
        var publishers: Set<ModuleID> = [EventHub.host]
        var finished = false
    }

    /// The sender stamped on events the host publishes.
    static let host: ModuleID = "mosaic.host"

    private let state = Mutex(State())
    let telemetry: Telemetry

    init(telemetry: Telemetry) {
        self.telemetry = telemetry
    }

    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError) {
        countPublished(Event.self, from: sender)
        // Without a tracer, no span and no context to carry: fan-out costs what it did before tracing.
        let span = telemetry.traces ? publishSpan(Event.self, from: sender) : nil
        defer { span?.end() }
        let type = ObjectIdentifier(Event.self)
        let accepted = state.withLock { state -> Bool in
            guard state.publishers.contains(sender) else { return false }
            // Sending inside the lock keeps every subscriber's order the publishing order; a send never waits.
            state.channels[type, default: Channel()].publish { sequence in
                EventEnvelope(sender: sender, event: event, sequence: sequence, publishContext: span?.context)
            }
            return true
        }
        guard accepted else {
            span?.setStatus(SpanStatus(code: .error, message: "sender not active"))
            throw EventError(
                "\(sender) is not active, so it cannot publish \(Event.self); events come only from active modules.")
        }
    }

    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber module: ModuleID, buffer: Int
    ) -> AsyncStream<EventEnvelope<Event>> {
        subscription(type, subscriber: module, buffer: buffer).stream
    }

    /// The events of `type` from now on, for `module`, until cancelled or the kernel shuts down; an inactive
    /// module's stream ends at once.
    func subscription<Event: Sendable>(
        _ type: Event.Type, subscriber module: ModuleID, buffer: Int
    ) -> Subscription<EventEnvelope<Event>> {
        state.withLock { state in
            guard !state.finished, state.publishers.contains(module) else { return .ended() }
            let key = ObjectIdentifier(Event.self)
            let channel = state.channels[key] ?? Channel()
            state.channels[key] = channel
            return channel.subscribers.subscribe(
                as: EventEnvelope<Event>.self, buffering: .newest(max(1, buffer)),
                observe: deliveryObserver(Event.self, subscriber: module, buffer: max(1, buffer)))
        }
    }

    /// Lets `module` publish and subscribe.
    func activate(_ module: ModuleID) {
        state.withLock { _ = $0.publishers.insert(module) }
    }

    /// Stops `module` publishing (its ledger ends its subscriptions).
    func deactivate(_ module: ModuleID) {
        state.withLock { _ = $0.publishers.remove(module) }
    }

    /// Ends every subscription: the kernel shut down.
    func finish() {
        let channels = state.withLock { state in
            state.finished = true
            state.publishers = []
            return state.channels.values.map(\.subscribers)
        }
        for channel in channels { channel.finish() }
    }
}
