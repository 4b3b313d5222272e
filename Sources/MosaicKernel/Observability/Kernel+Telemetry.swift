internal import Mosaic
internal import Tracing

extension Kernel {
    /// Runs `body` with `span` as the task's current service context, so spans started inside are its children.
    /// Without a tracer the task's context is left as it was: a no-op span's adds nothing, and with none set, each
    /// module call uses the context its service view made once instead of copying this one to name the module.
    func within(_ span: any Span, _ body: () async -> Void) async {
        guard telemetry.traces else { return await body() }
        await ServiceContext.$current.withValue(span.context) { await body() }
    }

    /// Counts a module's move from `from` to `to`, and updates the modules-per-state gauge for both states (kept
    /// incrementally: boot stays linear in the number of modules).
    func recordTransition(_ index: Int, from: ModuleState, to: ModuleState) {
        guard telemetry.measures else { return }
        telemetry.count(
            MetricName.transitions,
            [("module", graph.nodes[index].id.rawValue), ("from", from.name), ("to", to.name)])
        // The first move (and the first after the graph changed) counts every record, this one already moved.
        guard !gauges.states.isEmpty else { return countStates() }
        gauges.states[from.name, default: 0] -= 1
        gauges.states[to.name, default: 0] += 1
        telemetry.gauge(MetricName.modules, [("state", from.name)], gauges.states[from.name] ?? 0)
        telemetry.gauge(MetricName.modules, [("state", to.name)], gauges.states[to.name] ?? 0)
    }

    /// Counts the modules in each state from scratch and sets every state's gauge.
    func countStates() {
        var counts = Dictionary(uniqueKeysWithValues: Self.stateNames.map { ($0, 0) })
        for record in records { counts[record.lifecycle.state.name, default: 0] += 1 }
        gauges.states = counts
        for (state, count) in counts { telemetry.gauge(MetricName.modules, [("state", state)], count) }
    }

    /// Every state's name, so that a state no module is in reads 0 rather than its last count.
    static let stateNames = [
        "discovered", "validated", "authorized", "standby", "active", "deactivated", "failed", "blocked",
    ]

    /// Sets the diagnostics gauge: how many current diagnostics there are of each code and severity (a code that
    /// went away reads 0).
    func recordDiagnostics() {
        guard telemetry.measures else { return }
        var counts: [DiagnosticKey: Int] = Dictionary(uniqueKeysWithValues: gauges.diagnostics.map { ($0, 0) })
        for diagnostic in diagnostics {
            counts[DiagnosticKey(code: diagnostic.code.rawValue, severity: "\(diagnostic.severity)"), default: 0] += 1
        }
        for (key, count) in counts {
            telemetry.gauge(MetricName.diagnostics, [("code", key.code), ("severity", key.severity)], count)
        }
        gauges.diagnostics.formUnion(counts.keys)
    }

    /// The span of one module's job in a run of `kind`, under `parent`; `nil` without a tracer. (The module's own
    /// code runs in ``Services/call(_:)``, which names the module in the task's `ServiceContext` for its logs.)
    func startJobSpan(_ index: Int, _ kind: Schedule.Kind, parent: ServiceContext?) -> (any Span)? {
        guard telemetry.traces else { return nil }
        let manifest = graph[manifestAt: index]
        var context = parent ?? .topLevel
        context.mosaicModule = manifest.id
        var attributes: SpanAttributes = [
            SpanKey.module: .string(manifest.id.rawValue), SpanKey.version: .string("\(manifest.version)"),
        ]
        let name: String
        switch kind {
        case .activation:
            name = SpanName.activate
            if let cause = records[index].cause { attributes.set(SpanKey.cause, value: .string(cause.name)) }
        case .deactivation: name = SpanName.deactivate
        case .phase(let phase):
            name = SpanName.participant
            attributes.set(SpanKey.phase, value: .string(phase.name))
        case .event(let event):
            name = SpanName.listener
            attributes.set(SpanKey.event, value: .string(event.kind.name))
        }
        return telemetry.startSpan(name, parent: context, attributes: attributes)
    }

    /// Ends a job's span with its outcome, and records the job's duration.
    func endJobSpan(_ span: (any Span)?, _ index: Int, _ outcome: Outcome, _ kind: Schedule.Kind) {
        guard span != nil || telemetry.measures else { return }
        let id = graph.nodes[index].id.rawValue
        let name: String
        switch outcome.result {
        case .finished: name = "completed"
        case .threw(let error):
            name = "failed"
            span?.recordError(error)
            span?.setStatus(SpanStatus(code: .error, message: "threw"))
        case .timedOut:
            name = "timed_out"
            span?.addEvent(SpanEvent(name: "mosaic.timed_out", attributes: [SpanKey.module: .string(id)]))
            span?.setStatus(SpanStatus(code: .error, message: "timed out"))
        }
        span?.attributes.set(SpanKey.outcome, value: .string(name))
        span?.end()
        switch kind {
        case .activation:
            telemetry.record(MetricName.activationDuration, [("module", id), ("outcome", name)], outcome.duration)
        case .deactivation:
            telemetry.record(MetricName.deactivationDuration, [("module", id), ("outcome", name)], outcome.duration)
        case .phase(let phase):
            telemetry.record(
                MetricName.participantDuration, [("module", id), ("phase", phase.name), ("outcome", name)],
                outcome.duration)
        case .event(let event):
            telemetry.record(
                MetricName.participantDuration,
                [("module", id), ("phase", "event:" + event.kind.name), ("outcome", name)],
                outcome.duration)
        }
    }
}

/// What the kernel's gauges last showed, so that each update sets only what changed and a count that went away
/// reads 0.
struct GaugeCounts {
    /// How many modules are in each state (`mosaic_modules`); empty until counted.
    var states: [String: Int] = [:]
    /// The diagnostic codes `mosaic_diagnostics` has shown.
    var diagnostics: Set<DiagnosticKey> = []
}

/// A diagnostic code and severity, the dimensions of the diagnostics gauge.
struct DiagnosticKey: Hashable {
    let code: String
    let severity: String
}

extension Kernel {
    /// The span of a whole lifecycle phase or host event.
    func startDispatchSpan(_ kind: Schedule.Kind) -> any Span {
        switch kind {
        case .phase(let phase):
            telemetry.startSpan(SpanName.phase, attributes: [SpanKey.phase: .string(phase.name)])
        case .event(let event):
            telemetry.startSpan(SpanName.hostEvent, attributes: [SpanKey.event: .string(event.kind.name)])
        case .activation: telemetry.startSpan(SpanName.activate)
        case .deactivation: telemetry.startSpan(SpanName.deactivate)
        }
    }
}
