/// An event as a subscriber receives it: who sent it, as the kernel knows it, and its place in the stream.
public struct EventEnvelope<Event: Sendable>: Sendable {
    /// The publishing module, stamped by the kernel: a module cannot publish as another.
    public let sender: ModuleID
    /// The event as it was published.
    public let event: Event
    /// Counts the events of this type published so far; a gap means this subscriber's buffer dropped events.
    public let sequence: UInt64

    package init(sender: ModuleID, event: Event, sequence: UInt64) {
        self.sender = sender
        self.event = event
        self.sequence = sequence
    }
}

/// Why an event could not be published.
public struct EventError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What happened and what to do.
    public let message: String
    /// The value as text, for messages and logs.
    public var description: String { message }
    package init(_ message: String) { self.message = message }
}

/// What carries events between modules: the kernel, or a test harness.
package protocol EventBus: Sendable {
    /// Delivers `event` to every subscriber of its type, stamped with `sender`; never waits for a subscriber.
    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError)
    /// The events of `type` from now on, for `subscriber`, keeping at most `buffer` undelivered ones.
    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber: ModuleID, buffer: Int
    ) -> AsyncStream<EventEnvelope<Event>>
}

/// A module's handle on the event bus, bound to the module by the kernel.
///
/// ```swift
/// try context.events.publish(CityChanged(name: "Oslo"))
/// for await change in context.events.subscribe(to: CityChanged.self) { … change.sender … }
/// ```
/// A slow subscriber never holds up a publisher: each subscription buffers at most `buffer` events, and when it is
/// full the oldest undelivered event is dropped (the subscriber sees the gap in ``EventEnvelope/sequence``).
/// Subscriptions end when the subscribing module deactivates; publishing from a module that is no longer active
/// throws.
public struct Events: Sendable {
    private let bus: (any EventBus)?
    /// The module this handle publishes as.
    public let module: ModuleID

    package init(bus: (any EventBus)?, module: ModuleID) {
        self.bus = bus
        self.module = module
    }

    /// Publishes `event` as this module.
    public func publish<Event: Sendable>(_ event: Event) throws(EventError) {
        guard let bus else { throw EventError("\(module) has no event bus: it is not running in a kernel.") }
        try bus.publish(event, from: module)
    }

    /// The events of `type` published from now on.
    public func subscribe<Event: Sendable>(
        to type: Event.Type, buffer: Int = 256
    ) -> AsyncStream<EventEnvelope<Event>> {
        bus?.subscribe(type, subscriber: module, buffer: buffer) ?? AsyncStream { $0.finish() }
    }
}
