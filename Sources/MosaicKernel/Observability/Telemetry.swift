internal import CoreMetrics
internal import Mosaic
internal import Tracing

/// Where the kernel's spans and metrics go (the tracer and metrics factory of ``KernelOptions``, else the ones the
/// host bootstrapped), and their names. Every dimension is low-cardinality: a module id, an event type, a phase, an
/// outcome, a route template; never a user value, a link's parameters or a configuration value.
struct Telemetry: Sendable {
    let tracer: any Tracer
    let metrics: any MetricsFactory
    /// Whether every resolve is counted (``KernelOptions/countsEveryResolve``).
    let countsResolves: Bool

    init(options: KernelOptions) {
        tracer = options.tracer ?? InstrumentationSystem.tracer
        metrics = options.metricsFactory ?? MetricsSystem.factory
        countsResolves = options.countsEveryResolve
    }

    func count(_ name: String, _ dimensions: [(String, String)], by amount: Int = 1) {
        Counter(label: name, dimensions: dimensions, factory: metrics).increment(by: amount)
    }

    func record(_ name: String, _ dimensions: [(String, String)], _ duration: Duration) {
        Timer(label: name, dimensions: dimensions, factory: metrics).recordNanoseconds(duration.nanoseconds)
    }

    func gauge(_ name: String, _ dimensions: [(String, String)], _ value: Int) {
        Gauge(label: name, dimensions: dimensions, factory: metrics).record(value)
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
