package import Instrumentation

/// An event as a subscriber receives it: who sent it, as the kernel knows it, and its place in the feed.
public struct EventEnvelope<Event: Sendable>: Sendable {
    /// The publishing module, stamped by the kernel: a module cannot publish as another.
    public let sender: ModuleID
    /// The event as it was published.
    public let event: Event
    /// Counts the events of this type published so far; a gap means this subscriber's buffer dropped events.
    public let sequence: UInt64
    /// The context of the event's publish span, when the kernel traces: a process span links to it
    /// (``Events/process(_:isolation:_:)``). Never a value of the event.
    package let publishContext: ServiceContext?

    package init(sender: ModuleID, event: Event, sequence: UInt64, publishContext: ServiceContext? = nil) {
        self.sender = sender
        self.event = event
        self.sequence = sequence
        self.publishContext = publishContext
    }
}

/// Why an event could not be published, or a durable handler registered.
public struct EventError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: the one thing to decide on, never the message's text.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The handle is not bound to a kernel (a module value made outside one).
        case notRunning = "not-running"
        /// The module is not active: events come only from active modules, and handlers run only while active.
        case inactive
        /// The call is malformed: a handler name that is empty or has a "/", an event that does not encode, a
        /// durable event published without `await`, a handler registered by the host.
        case invalid
        /// The module already has a durable handler with that name.
        case duplicate
        /// The outbox's storage did not answer in time or could not be reached; the event may still have been
        /// stored if the storage answered nothing. Retry later.
        case unavailable
    }

    /// The kind of failure.
    public let code: Code
    /// What happened and what to do.
    public let message: String
    /// The value as text, for messages and logs.
    public var description: String { message }
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// What carries events between modules: the kernel, or a test harness.
package protocol EventBus: Sendable {
    /// Delivers `event` to every subscriber of its type, stamped with `sender`; never waits for a subscriber.
    func publish<Event: Sendable>(_ event: Event, from sender: ModuleID) throws(EventError)
    /// Stores durable `events` in the outbox, all or none, then delivers them like ``publish(_:from:)``.
    func publish<Event: DurableEvent>(contentsOf events: [Event], from sender: ModuleID) async throws(EventError)
    /// The events of `type` from now on, for `subscriber`, keeping at most `buffer` undelivered ones.
    func subscribe<Event: Sendable>(
        _ type: Event.Type, subscriber: ModuleID, buffer: Int
    ) -> Feed<EventEnvelope<Event>>
    /// Runs `handler` for each durable `type` event recorded for `subscriber`'s handler `name`, at least once,
    /// while `subscriber` is active.
    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        _ handler: @escaping @Sendable (DurableEnvelope<Event>) async throws -> Void
    ) async throws(EventError)
    /// Runs `handler` as ``handle(_:subscriber:name:_:)`` does, then commits what it recorded in the transaction
    /// together with the delivery's completion, fenced by the attempt's claim.
    func handle<Event: DurableEvent>(
        _ type: Event.Type, subscriber: ModuleID, name: String,
        transactional handler: @escaping @Sendable (DurableEnvelope<Event>, inout StateTransaction) async throws -> Void
    ) async throws(EventError)
    /// Starts tracing `subscriber`'s processing of `envelope`, or `nil` when nothing traces it.
    func startProcessing<Event: Sendable>(
        _ envelope: EventEnvelope<Event>, subscriber: ModuleID
    ) -> (any EventProcessing)?
}

/// One subscriber's processing of one event, as the kernel traces it.
package protocol EventProcessing: Sendable {
    /// The task-local context to process the event in: the process span's, naming the subscribing module.
    var context: ServiceContext { get }
    /// Ends the processing, as failed when `failure` is set.
    func end(failure: (any Error)?)
}

/// A module's handle on the event bus, bound to the module by the kernel.
///
/// ```swift
/// try context.events.publish(CityChanged(name: "Oslo"))          // in memory: returns at once
/// try await context.events.publish(OrderPlaced(order: 7))        // durable: returns once stored
/// for await change in context.events.subscribe(to: CityChanged.self) {
///     await context.events.process(change) { city in … }
/// }
/// ```
/// A slow subscriber never holds up a publisher: each subscription buffers at most `buffer` events, and when it is
/// full the oldest undelivered event is dropped (the subscriber sees the gap in ``EventEnvelope/sequence``).
/// Subscriptions end when the subscribing module deactivates; publishing from a module that is no longer active
/// throws.
public struct Events: Sendable {
    package let bus: (any EventBus)?
    /// The module this handle publishes as.
    public let module: ModuleID

    package init(bus: (any EventBus)?, module: ModuleID) {
        self.bus = bus
        self.module = module
    }

    /// Publishes `event` as this module, to this instance's subscribers; returns at once.
    ///
    /// A ``DurableEvent`` must be stored before it counts as published, which takes a round trip to the outbox:
    /// publish it with `try await` (its `async` overload). From code that cannot wait, this refuses it
    /// (``EventError/Code/invalid``) rather than block a thread.
    public func publish<Event: Sendable>(_ event: Event) throws(EventError) {
        guard let bus else { throw Self.notRunning(module) }
        try bus.publish(event, from: module)
    }

    static func notRunning(_ module: ModuleID) -> EventError {
        EventError(.notRunning, "\(module) has no event bus: it is not running in a kernel.")
    }

    /// The events of `type` published from now on.
    public func subscribe<Event: Sendable>(
        to type: Event.Type, buffer: Int = 256
    ) -> Feed<EventEnvelope<Event>> {
        bus?.subscribe(type, subscriber: module, buffer: buffer) ?? .ended
    }

    /// Runs `body` on `envelope`'s event as this module's processing of it: when the kernel traces, inside a
    /// `process` span linked to the event's `publish` span, with this module's id in the task-local
    /// `ServiceContext`, so the spans and logs `body` makes belong to it. Without a tracer it just runs `body`.
    ///
    /// A `body` that throws marks the span as an error (with the error's type, never its message) and the error
    /// is thrown on.
    public func process<Event: Sendable, Result>(
        _ envelope: EventEnvelope<Event>, isolation: isolated (any Actor)? = #isolation,
        _ body: (Event) async throws -> Result
    ) async rethrows -> Result {
        guard envelope.publishContext != nil, let processing = bus?.startProcessing(envelope, subscriber: module)
        else { return try await body(envelope.event) }
        do {
            let result = try await ServiceContext.$current.withValue(processing.context) {
                try await body(envelope.event)
            }
            processing.end(failure: nil)
            return result
        } catch {
            processing.end(failure: error)
            throw error
        }
    }
}
