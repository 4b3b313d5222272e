internal import CoreMetrics
internal import Mosaic
internal import Synchronization
internal import Tracing

/// The kernel's event bus: typed fan-out from active modules to subscribers, each with a bounded buffer that drops
/// its oldest event rather than make a publisher wait. A module's subscriptions end with its ledger.
///
/// Each event type has one channel, made on the type's first publish or subscription: its count of events so far
/// and a broadcast of the type's envelopes. A publish builds the `EventEnvelope` once and hands that one value to
/// every subscriber's mailbox, so a delivery does no conversion, no dynamic cast and no generic-metadata lookup.
final class EventHub: EventBus, EventRelaying, LedgerClosingObserver {
    /// The events of one type: how many were published, and who subscribed.
    private struct Channel {
        /// Events of the type published so far: the last one's sequence number.
        var published: UInt64 = 0
        /// The type's subscribers: a `Broadcast<EventEnvelope<Event>>`.
        let subscribers: any AnyBroadcast

        init<Event: Sendable>(of type: Event.Type) {
            subscribers = Broadcast<EventEnvelope<Event>>()
        }

        /// The subscribers, typed (a channel is only ever used with the type it was made for).
        func subscribers<Event: Sendable>(of type: Event.Type) -> Broadcast<EventEnvelope<Event>>? {
            subscribers as? Broadcast<EventEnvelope<Event>>
        }

        /// Numbers the next event and hands the envelope `make` puts it in to every subscriber.
        mutating func publish<Event: Sendable>(_ make: (_ sequence: UInt64) -> EventEnvelope<Event>) {
            published += 1
            subscribers(of: Event.self)?.send(make(published))
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

    private let state = Locked(State())
    /// The on-demand modules on standby that subscribe to each event type, by qualified type name; a publish of
    /// the type starts them.
    let standbySubscribers = StandbySubscribers()
    let telemetry: Telemetry
    /// Where durable events go before any subscriber gets them.
    let outbox: DurableOutbox

    init(telemetry: Telemetry, outbox: DurableOutbox) {
        self.telemetry = telemetry
        self.outbox = outbox
    }

    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError) {
        if event is any DurableEvent {
            throw EventError(
                .invalid,
                "\(Event.self) is a durable event: it must be stored before it counts as published, so publish it "
                    + "with `try await context.events.publish(…)` from asynchronous code, where the wait blocks no "
                    + "thread.")
        }
        countPublished(Event.self, from: sender)
        standbySubscribers.start(for: Event.self)
        // Without a tracer, no span and no context to carry: fan-out costs what it did before tracing.
        let span = telemetry.traces ? publishSpan(Event.self, from: sender) : nil
        defer { span?.end() }
        let type = ObjectIdentifier(Event.self)
        let accepted = state.withLock { state -> Bool in
            guard state.publishers.contains(sender) else { return false }
            // Sending inside the lock keeps every subscriber's order the publishing order; a send never waits.
            state.channels[type, default: Channel(of: Event.self)].publish { sequence in
                EventEnvelope(sender: sender, event: event, sequence: sequence, publishContext: span?.context)
            }
            return true
        }
        guard accepted else {
            span?.setStatus(SpanStatus(code: .error, message: "sender not active"))
            throw Self.inactive(sender, Event.self)
        }
    }

    /// Stores durable `events` in the outbox (once stored they count as published, whatever happens to their
    /// sender), then hands them to this instance's subscribers.
    func publish<Event: DurableEvent>(contentsOf events: [Event], from sender: ModuleID) async throws(EventError) {
        guard isPublisher(sender) else { throw Self.inactive(sender, Event.self) }
        var outgoing: [OutboxEvent] = []
        outgoing.reserveCapacity(events.count)
        for event in events { outgoing.append(try outbox.encode(event, from: sender)) }
        try await outbox.append(outgoing, until: outbox.clock.now() + outbox.timeLimit)
        for event in events { fanOut(event, from: sender) }
    }

    /// Whether `module` may publish now.
    func isPublisher(_ module: ModuleID) -> Bool {
        state.withLock { $0.publishers.contains(module) }
    }

    /// Hands a durable event a transaction stored to this instance's in-memory subscribers of its type.
    func fanOut<Event: DurableEvent>(_ event: Event, from sender: ModuleID) {
        countPublished(Event.self, from: sender)
        standbySubscribers.start(for: Event.self)
        state.withLock { state in
            state.channels[ObjectIdentifier(Event.self), default: Channel(of: Event.self)].publish { sequence in
                EventEnvelope(sender: sender, event: event, sequence: sequence)
            }
        }
    }

    /// Hands `event`, which `sender` published in another process (the host of an isolated module), to this
    /// instance's subscribers of its type.
    func relay<Event: Sendable>(_ event: Event, from sender: ModuleID) {
        state.withLock { state in
            state.channels[ObjectIdentifier(Event.self), default: Channel(of: Event.self)].publish { sequence in
                EventEnvelope(sender: sender, event: event, sequence: sequence)
            }
        }
    }

    private static func inactive<Event>(_ sender: ModuleID, _ type: Event.Type) -> EventError {
        EventError(
            .inactive,
            "\(sender) is not active, so it cannot publish \(Event.self); events come only from active modules.")
    }

    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> Void
    ) async throws(EventError) {
        throw EventError(
            .invalid, "Durable handlers belong to modules; the host cannot register \(name.quotedForMessage()).")
    }

    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        transactional handler: @escaping @Sendable (DurableEnvelope<Event>, inout StateTransaction) async throws -> Void
    ) async throws(EventError) {
        throw EventError(
            .invalid, "Durable handlers belong to modules; the host cannot register \(name.quotedForMessage()).")
    }

    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber module: ModuleID, buffer: Int
    ) -> Feed<EventEnvelope<Event>> {
        subscription(type, subscriber: module, buffer: buffer).feed
    }

    /// The events of `type` from now on, for `module`, until cancelled or the kernel shuts down; an inactive
    /// module's feed ends at once.
    func subscription<Event: Sendable>(
        _ type: Event.Type, subscriber module: ModuleID, buffer: Int
    ) -> Subscription<EventEnvelope<Event>> {
        state.withLock { state in
            guard !state.finished, state.publishers.contains(module) else { return .ended() }
            let key = ObjectIdentifier(Event.self)
            let channel = state.channels[key] ?? Channel(of: Event.self)
            state.channels[key] = channel
            guard let subscribers = channel.subscribers(of: Event.self) else { return .ended() }
            return subscribers.subscribe(
                buffering: .newest(max(1, buffer)),
                observe: deliveryObserver(Event.self, subscriber: module, buffer: max(1, buffer)))
        }
    }

    /// Makes room for `count` publishers, so that activating that many modules never regrows the set.
    func reservePublishers(_ count: Int) {
        state.withLock { $0.publishers.reserveCapacity(count) }
    }

    /// Lets `module` publish and subscribe.
    func activate(_ module: ModuleID) {
        state.withLock { _ = $0.publishers.insert(module) }
    }

    /// Stops `module` publishing (its ledger ends its subscriptions).
    func deactivate(_ module: ModuleID) {
        state.withLock { _ = $0.publishers.remove(module) }
    }

    /// A module's ledger closed: it may no longer publish.
    func ledgerClosed(of module: ModuleID) {
        deactivate(module)
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
