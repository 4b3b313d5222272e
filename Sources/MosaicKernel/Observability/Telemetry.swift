internal import CoreMetrics
internal import Mosaic
internal import Synchronization
internal import Tracing

/// Where the kernel's spans and metrics go (the tracer and metrics factory of ``KernelOptions``, else the ones the
/// host bootstrapped), and their names. Every dimension is low-cardinality: a module id, an event type, a phase, an
/// outcome, a route template; never a user value, a link's parameters or a configuration value.
struct Telemetry: Sendable {
    let tracer: any Tracer
    /// Whether spans go anywhere: `false` for a no-op tracer (none bootstrapped), and then the event hub makes
    /// no publish span and carries no context to process spans.
    let traces: Bool
    let metrics: any MetricsFactory
    /// Whether metrics go anywhere: `false` for the no-op factory (none bootstrapped), and then counting,
    /// timing and gauging return at once, without making a handle or a dimensions array.
    let measures: Bool
    /// Whether every resolve is counted (``KernelOptions/countsEveryResolve``).
    let countsResolves: Bool
    /// The metric handles made so far, one per label and dimensions, so that a count costs a lookup rather than a
    /// new handle from the factory.
    private let handles: MetricHandles

    init(options: KernelOptions) {
        tracer = options.tracer ?? InstrumentationSystem.tracer
        traces = !(tracer is NoOpTracer)
        metrics = options.metricsFactory ?? MetricsSystem.factory
        measures = !(metrics is NOOPMetricsHandler)
        countsResolves = options.countsEveryResolve
        handles = MetricHandles()
    }

    /// Whether anything is recorded at all; a caller with dimensions to compute checks it first.
    var isRecording: Bool { measures || traces }

    func count(_ name: String, _ dimensions: @autoclosure () -> [(String, String)], by amount: Int = 1) {
        guard measures else { return }
        counter(name, dimensions()).increment(by: amount)
    }

    /// The counter for `name` and `dimensions`, for a caller that keeps it.
    func counter(_ name: String, _ dimensions: [(String, String)]) -> Counter {
        handles.counters.handle(name, dimensions) { Counter(label: name, dimensions: dimensions, factory: metrics) }
    }

    func record(_ name: String, _ dimensions: @autoclosure () -> [(String, String)], _ duration: Duration) {
        guard measures else { return }
        let dimensions = dimensions()
        return handles.timers.handle(name, dimensions) { Timer(label: name, dimensions: dimensions, factory: metrics) }
            .recordNanoseconds(duration.nanoseconds)
    }

    func gauge(_ name: String, _ dimensions: @autoclosure () -> [(String, String)], _ value: Int) {
        guard measures else { return }
        let dimensions = dimensions()
        return handles.gauges.handle(name, dimensions) { Gauge(label: name, dimensions: dimensions, factory: metrics) }
            .record(value)
    }

    /// Starts a span named `name` under `parent` (the task's context when `nil`).
    func startSpan(
        _ name: String, parent: ServiceContext? = nil, kind: SpanKind = .internal, attributes: SpanAttributes = [:]
    ) -> any Span {
        let span = tracer.startSpan(name, context: parent ?? .current ?? .topLevel, ofKind: kind)
        if !attributes.isEmpty { span.attributes.merge(attributes) }
        return span
    }
}

/// The counters, timers and gauges one kernel made, by label and dimensions.
private final class MetricHandles: Sendable {
    let counters = HandleCache<Counter>()
    let timers = HandleCache<Timer>()
    let gauges = HandleCache<Gauge>()
}

/// Metric handles of one kind, by label and dimensions; each is made once, on first use.
private final class HandleCache<Handle: Sendable>: Sendable {
    private struct Key: Hashable {
        let label: String
        let dimensions: [Dimension]
    }

    private struct Dimension: Hashable {
        let name: String
        let value: String
    }

    private let handles = Locked<[Key: Handle]>([:])

    /// The handle for `label` and `dimensions`, made by `make` the first time.
    func handle(_ label: String, _ dimensions: [(String, String)], make: () -> Handle) -> Handle {
        let key = Key(label: label, dimensions: dimensions.map { Dimension(name: $0.0, value: $0.1) })
        if let handle = handles.withLock({ $0[key] }) { return handle }
        let made = make()
        return handles.withLock { handles in
            if let handle = handles[key] { return handle }
            handles[key] = made
            return made
        }
    }
}

/// The names of the kernel's metrics and spans (documented in the DocC catalog's Operations article).
enum MetricName {
    static let bootDuration = "mosaic_boot_duration_seconds"
    static let activationDuration = "mosaic_module_activation_duration_seconds"
    static let deactivationDuration = "mosaic_module_deactivation_duration_seconds"
    static let modules = "mosaic_modules"
    static let transitions = "mosaic_module_transitions_total"
    static let diagnostics = "mosaic_diagnostics"
    static let participantDuration = "mosaic_participant_duration_seconds"
    static let serviceBuilds = "mosaic_service_builds_total"
    static let resolveFailures = "mosaic_service_resolve_failures_total"
    static let resolves = "mosaic_service_resolves_total"
    static let eventsPublished = "mosaic_events_published_total"
    static let eventsDelivered = "mosaic_events_delivered_total"
    static let eventsDropped = "mosaic_events_dropped_total"
    static let eventBufferDepth = "mosaic_event_buffer_depth"
    static let durableDeliveries = "mosaic_durable_deliveries_total"
    static let deeplinks = "mosaic_deeplinks_total"
    static let stateWrites = "mosaic_state_writes_total"
    static let statePersistDuration = "mosaic_state_persist_duration_seconds"
}

/// The names of the kernel's spans.
enum SpanName {
    static let boot = "mosaic.boot"
    static let validate = "mosaic.validate"
    static let authorize = "mosaic.authorize"
    static let plan = "mosaic.plan"
    static let reconcile = "mosaic.reconcile"
    static let activate = "mosaic.module.activate"
    static let deactivate = "mosaic.module.deactivate"
    static let shutdown = "mosaic.shutdown"
    static let phase = "mosaic.phase"
    static let participant = "mosaic.phase.participant"
    static let hostEvent = "mosaic.host_event"
    static let listener = "mosaic.host_event.listener"
    static let deeplink = "mosaic.deeplink"
    static let serviceBuild = "mosaic.service.build"
}

/// The attribute keys of the kernel's spans.
enum SpanKey {
    static let module = "mosaic.module.id"
    /// The sending module, on a process span (whose module is the subscriber).
    static let sender = "mosaic.event.sender"
    static let version = "mosaic.module.version"
    static let outcome = "mosaic.outcome"
    static let cause = "mosaic.cause"
    static let phase = "mosaic.phase"
    static let event = "mosaic.host_event.kind"
    static let feature = "mosaic.deeplink.feature"
    static let action = "mosaic.deeplink.action"
    static let service = "mosaic.service"
    static let modules = "mosaic.modules"
    static let diagnostics = "mosaic.diagnostics"
}

extension Duration {
    /// The duration in whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
