internal import Logging
public import Mosaic
internal import Tracing

extension Kernel {
    /// Runs `phase`: the participants of every active module, each module's after those of the modules it
    /// depends on, each within ``KernelOptions/participantTimeLimit``. A participant that throws or hangs is
    /// reported (in the returned report and as a diagnostic) and the others still run. Phases can be run again
    /// and again, such as `.backgroundRefresh`.
    @discardableResult
    public func run(_ phase: LifecyclePhase) async throws(KernelError) -> DispatchReport {
        try await dispatch(.phase(phase), name: phase.name) { $0.participants.contains { $0.phase == phase } }
    }

    /// Delivers `event` to the listeners of every active module that listens to its kind, in dependency order,
    /// with the same isolation as ``run(_:)``.
    @discardableResult
    public func send(_ event: HostEvent) async throws(KernelError) -> DispatchReport {
        try await dispatch(.event(event), name: "event \(event.kind)") {
            $0.listeners.contains { $0.kind == event.kind }
        }
    }

    private func dispatch(
        _ kind: Schedule.Kind, name: String, takesPart: @escaping (ModuleRegistrar) -> Bool
    ) async throws(KernelError) -> DispatchReport {
        try await exclusively { () async throws(KernelError) -> DispatchReport in
            try requireRunning()
            let started = clock.now()
            dispatchEntries = []
            let span = startDispatchSpan(kind)
            await within(span) {
                await runInDependencyOrder(
                    graph.nodes.indices.filter { records[$0].isActive && takesPart(graph.nodes[$0].registrar) },
                    kind: kind)
            }
            span.end()
            recordDiagnostics()
            return DispatchReport(name: name, entries: dispatchEntries, duration: clock.now() - started)
        }
    }

    func startParticipants(_ index: Int, _ phase: LifecyclePhase) -> ModuleJob? {
        startSteps(index, graph.nodes[index].registrar.participants.filter { $0.phase == phase }.map(\.run))
    }

    func startListeners(_ index: Int, _ event: HostEvent) -> ModuleJob? {
        let listeners = graph.nodes[index].registrar.listeners.filter { $0.kind == event.kind }
        return startSteps(index, listeners.map { listener in { context in try await listener.handle(event, context) } })
    }

    /// The job that runs `steps` in order with the context of the module at `index` (its services also for
    /// `@Injected`); `nil` for a module that never got a context.
    private func startSteps(_ index: Int, _ steps: [@Sendable (ActivationContext) async throws -> Void]) -> ModuleJob? {
        guard let context = records[index].context else { return nil }
        return {
            try await context.services.call {
                for step in steps { try await step(context) }
            }
            return .nothing
        }
    }

    /// Records one module's part in a phase (`phase` set) or an event (`phase` nil).
    func finishDispatch(_ index: Int, _ outcome: Outcome, phase: LifecyclePhase?) {
        let id = graph.nodes[index].id
        if let phase { records[index].phaseTimes[phase] = outcome.duration }
        let what = phase.map { "participant in \($0)" } ?? "host-event listener"
        let result: DispatchReport.Outcome
        switch outcome.result {
        case .finished:
            result = .completed
        case .threw(let error):
            let reason = "\(id)'s \(what) threw: \(String(describing: error).prefix(500))"
            result = .failed(reason)
            runtimeDiagnostics.append(
                Diagnostic(
                    phase == nil ? .listenerFailed : .participantFailed, .warning, modules: [id], message: reason,
                    fix: "Fix the error in \(id)'s \(what); the module stays active and the others ran."))
        case .timedOut:
            result = .timedOut
            runtimeDiagnostics.append(
                Diagnostic(
                    phase == nil ? .listenerFailed : .participantTimedOut, .warning, modules: [id],
                    message: "\(id)'s \(what) did not finish within \(options.participantTimeLimit); it was "
                        + "cancelled and the others went on.",
                    fix: "Make it return promptly (start long work in a task), or raise "
                        + "KernelOptions.participantTimeLimit."))
        }
        if result != .completed {
            logger.warning("\(what) did not complete", metadata: ["module": "\(id)", "outcome": "\(result)"])
        }
        dispatchEntries.append(DispatchReport.Entry(module: id, duration: outcome.duration, outcome: result))
    }
}
