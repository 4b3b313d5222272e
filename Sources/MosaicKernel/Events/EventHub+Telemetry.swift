internal import CoreMetrics
internal import Mosaic
internal import Tracing

extension EventHub {
    /// The name an event type goes by in spans and metrics: the type's name, never the event's content.
    static func name<Event>(of type: Event.Type) -> String {
        String(describing: type)
    }

    /// Counts an event published, by type and sender.
    func countPublished<Event>(_ type: Event.Type, from sender: ModuleID) {
        telemetry.count(MetricName.eventsPublished, [("event", Self.name(of: type)), ("module", sender.rawValue)])
    }

    /// A `publish` span in OpenTelemetry's messaging terms: a producer span named after the destination.
    func publishSpan<Event>(_ type: Event.Type, from sender: ModuleID) -> any Span {
        let event = Self.name(of: type)
        return telemetry.startSpan(
            "publish \(event)", kind: .producer,
            attributes: [
                "messaging.system": "mosaic", "messaging.operation.type": "publish",
                "messaging.operation.name": "publish", "messaging.destination.name": .string(event),
                SpanKey.module: .string(sender.rawValue),
            ])
    }

    /// A `process` span in OpenTelemetry's messaging terms for `subscriber`'s processing of `envelope`: a consumer
    /// span named after the destination, under the subscriber's current context and linked to the event's publish
    /// span; `nil` when the kernel does not trace (the envelope then carries no publish context).
    func startProcessing<Event: Sendable>(
        _ envelope: EventEnvelope<Event>, subscriber: ModuleID
    ) -> (any EventProcessing)? {
        guard telemetry.traces, let publish = envelope.publishContext else { return nil }
        let event = Self.name(of: Event.self)
        let span = telemetry.startSpan(
            "process \(event)", kind: .consumer,
            attributes: [
                "messaging.system": "mosaic", "messaging.operation.type": "process",
                "messaging.operation.name": "process", "messaging.destination.name": .string(event),
                SpanKey.module: .string(subscriber.rawValue), SpanKey.sender: .string(envelope.sender.rawValue),
            ])
        span.addLink(SpanLink(context: publish, attributes: [:]))
        return ProcessSpan(span: span, module: subscriber)
    }

    /// Counts what happens to each event offered to `subscriber`'s buffer: delivered into it, or delivered with
    /// the oldest waiting one dropped; and how full the buffer is.
    func deliveryObserver<Event: Sendable>(
        _ type: Event.Type, subscriber: ModuleID, buffer: Int
    ) -> @Sendable (Mailbox.Outcome) -> Void {
        let dimensions = [("event", Self.name(of: type)), ("subscriber", subscriber.rawValue)]
        let delivered = Counter(label: MetricName.eventsDelivered, dimensions: dimensions, factory: telemetry.metrics)
        let dropped = Counter(label: MetricName.eventsDropped, dimensions: dimensions, factory: telemetry.metrics)
        let depth = Gauge(label: MetricName.eventBufferDepth, dimensions: dimensions, factory: telemetry.metrics)
        return { outcome in
            switch outcome {
            case .kept(let waiting):
                delivered.increment()
                depth.record(waiting)
            case .droppedOldest:
                delivered.increment()
                dropped.increment()
                depth.record(buffer)
            }
        }
    }
}

/// A subscriber's processing of an event, traced by its process span.
private struct ProcessSpan: EventProcessing {
    let span: any Span
    let module: ModuleID

    var context: ServiceContext {
        var context = span.context
        context.mosaicModule = module
        return context
    }

    func end(failure: (any Error)?) {
        if let failure {
            // The error's type only: its message may quote the event.
            span.setStatus(SpanStatus(code: .error, message: String(describing: type(of: failure))))
            span.attributes.set("error.type", value: .string(String(describing: type(of: failure))))
        }
        span.end()
    }
}
