internal import CoreMetrics
internal import Mosaic
internal import Tracing

extension EventHub {
    /// The name an event type goes by in spans and metrics: the type's name, never the event's content.
    static func name<Event>(of type: Event.Type) -> String {
        String(describing: type)
    }

    /// A `publish` span in OpenTelemetry's messaging terms (a producer span named after the destination), and a
    /// count of events published by type and sender.
    func publishSpan<Event>(_ type: Event.Type, from sender: ModuleID) -> any Span {
        let event = Self.name(of: type)
        telemetry.count(MetricName.eventsPublished, [("event", event), ("module", sender.rawValue)])
        return telemetry.startSpan(
            "publish \(event)", kind: .producer,
            attributes: [
                "messaging.system": "mosaic", "messaging.operation.type": "publish",
                "messaging.operation.name": "publish", "messaging.destination.name": .string(event),
                SpanKey.module: .string(sender.rawValue),
            ])
    }

    /// Counts what happens to each event offered to `subscriber`'s buffer: delivered into it, or delivered with
    /// the oldest waiting one dropped; and how full the buffer is.
    func deliveryObserver<Event: Sendable>(
        _ type: Event.Type, subscriber: ModuleID, buffer: Int
    ) -> @Sendable (AsyncStream<EventEnvelope<Event>>.Continuation.YieldResult) -> Void {
        let dimensions = [("event", Self.name(of: type)), ("subscriber", subscriber.rawValue)]
        let delivered = Counter(label: MetricName.eventsDelivered, dimensions: dimensions, factory: telemetry.metrics)
        let dropped = Counter(label: MetricName.eventsDropped, dimensions: dimensions, factory: telemetry.metrics)
        let depth = Gauge(label: MetricName.eventBufferDepth, dimensions: dimensions, factory: telemetry.metrics)
        return { result in
            switch result {
            case .enqueued(let remaining):
                delivered.increment()
                depth.record(buffer - remaining)
            case .dropped:
                delivered.increment()
                dropped.increment()
                depth.record(buffer)
            case .terminated:
                break
            @unknown default:
                break
            }
        }
    }
}
