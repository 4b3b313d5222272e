internal import CoreMetrics
internal import Mosaic
internal import Synchronization
internal import Tracing

/// The kernel's event bus: typed fan-out from active modules to subscribers, each with a bounded buffer that drops
/// its oldest event rather than make a publisher wait. A module's subscriptions end with its ledger.
final class EventHub: EventBus {
    /// One published event, as its channel carries it.
    struct Delivery: Sendable {
        let sequence: UInt64
        let sender: ModuleID
        let event: any Sendable
    }

    private struct State {
        /// A channel per event type.
        var channels: [ObjectIdentifier: Broadcast<Delivery>] = [:]
        var sequences: [ObjectIdentifier: UInt64] = [:]
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
        let span = publishSpan(Event.self, from: sender)
        defer { span.end() }
        let type = ObjectIdentifier(Event.self)
        let accepted = state.withLock { state -> Bool in
            guard state.publishers.contains(sender) else { return false }
            let sequence = state.sequences[type, default: 0] + 1
            state.sequences[type] = sequence
            // Sending inside the lock keeps every subscriber's order the publishing order; a send never waits.
            state.channels[type]?.send(Delivery(sequence: sequence, sender: sender, event: event))
            return true
        }
        guard accepted else {
            span.setStatus(SpanStatus(code: .error, message: "sender not active"))
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
            let channel = state.channels[key] ?? Broadcast()
            state.channels[key] = channel
            return channel.subscribe(
                bufferingPolicy: .bufferingNewest(max(1, buffer)),
                observe: deliveryObserver(Event.self, subscriber: module, buffer: max(1, buffer))
            ) { delivery in
                (delivery.event as? Event).map {
                    EventEnvelope(sender: delivery.sender, event: $0, sequence: delivery.sequence)
                }
            }
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
            return Array(state.channels.values)
        }
        for channel in channels { channel.finish() }
    }
}
