internal import Logging
internal import Mosaic

extension Kernel {
    /// Brings every module to the state the graph and the policy call for: stops what may no longer run
    /// (dependents first), marks what is failed or blocked with its reason, and starts what may run (dependencies
    /// first). Boot, grant, revoke, install and uninstall all end here.
    func reconcile() async {
        var verdicts = authorize()
        let stopping = graph.ids.filter { records[$0]?.lifecycle.state == .active && verdicts[$0]?.isRun != true }
        await deactivate(stopping)
        settle(verdicts)
        let starting = graph.activationOrder.filter {
            verdicts[$0]?.isRun == true && records[$0]?.lifecycle.state != .active
        }
        let failuresBefore = failures.count
        await activate(starting)
        if failures.count != failuresBefore {
            verdicts = authorize()
            settle(verdicts)
        }
    }

    /// The verdict on every module under the current policy and failures; keeps the authorization diagnostics.
    func authorize() -> [ModuleID: Verdict] {
        let (verdicts, diagnostics) = graph.authorize(policy, failures: failures, leaving: leaving)
        authorizationDiagnostics = diagnostics
        return verdicts
    }

    /// Gives every module that may not run the blocked state and reason its verdict names.
    private func settle(_ verdicts: [ModuleID: Verdict]) {
        for id in graph.ids {
            guard case .blocked(let blockers, let reason, _)? = verdicts[id] else { continue }
            move(id) { lifecycle in
                switch lifecycle {
                case .validated(let validated): .blocked(validated.block(by: blockers, reason: reason))
                case .authorized(let authorized): .blocked(authorized.block(by: blockers, reason: reason))
                case .deactivated(let deactivated): .blocked(deactivated.block(by: blockers, reason: reason))
                case .blocked(let blocked): .blocked(blocked.block(by: blockers, reason: reason))
                case .discovered, .active, .failed: nil
                }
            }
        }
    }

    /// Activates `ids` (in dependency order, concurrently where they are independent). A module whose required
    /// dependency did not come up is left authorized for ``settle(_:)`` to block.
    func activate(_ ids: [ModuleID]) async {
        for id in ids {
            move(id) { lifecycle in
                switch lifecycle {
                case .validated(let validated): .authorized(validated.authorize())
                case .deactivated(let deactivated): .authorized(deactivated.authorize())
                case .blocked(let blocked): .authorized(blocked.unblock().authorize())
                case .discovered, .authorized, .active, .failed: nil
                }
            }
        }
        let members = Set(ids)
        await runInDependencyOrder(
            ids, waitingOn: { id in graph.dependencies(of: id).filter(members.contains) },
            timeLimit: options.activationTimeLimit,
            start: startActivation, finish: finishActivation)
    }

    /// Deactivates `ids`, each after every module among them that depends on it.
    func deactivate(_ ids: [ModuleID]) async {
        let members = Set(ids)
        await runInDependencyOrder(
            ids.reversed(), waitingOn: { id in graph.dependents(of: id).filter(members.contains) },
            timeLimit: options.deactivationTimeLimit,
            start: startDeactivation, finish: finishDeactivation)
    }

    private func startActivation(_ id: ModuleID) -> Job? {
        guard let node = graph.node(id), case .authorized = records[id]?.lifecycle else { return nil }
        let required = graph.requirements(of: id)
        guard required.allSatisfy({ records[$0]?.lifecycle.state == .active }) else { return nil }
        let context = ActivationContext(
            id: id, version: node.manifest.version, host: host,
            logger: Logger(label: id.rawValue))
        let make = node.entry.factory.make
        return {
            let module = make()
            try await module.activate(context)
            return module
        }
    }

    private func finishActivation(_ id: ModuleID, _ outcome: Outcome) {
        switch outcome.result {
        case .finished(let module):
            records[id]?.instance = module
            records[id]?.activationTime = outcome.duration
            move(id) { lifecycle in
                guard case .authorized(let authorized) = lifecycle else { return nil }
                return .active(authorized.activate())
            }
        case .threw(let error):
            fail(
                id, after: outcome.duration, code: .activationFailed,
                reason: "activate(_:) threw: \(String(describing: error).prefix(500))",
                fix: "Fix the error in \(id)'s activate(_:); its dependents start once it activates.")
        case .timedOut:
            fail(
                id, after: outcome.duration, code: .activationTimedOut,
                reason: "activate(_:) did not finish within \(options.activationTimeLimit); it was cancelled.",
                fix: "Make \(id)'s activate(_:) return promptly (start long work in a task), or raise "
                    + "KernelOptions.activationTimeLimit.")
        }
    }

    private func fail(_ id: ModuleID, after duration: Duration, code: Diagnostic.Code, reason: String, fix: String) {
        failures[id] = reason
        records[id]?.activationTime = duration
        runtimeDiagnostics.append(Diagnostic(code, .error, modules: [id], message: "\(id) failed: \(reason)", fix: fix))
        logger.error("module failed to activate", metadata: ["module": "\(id)", "reason": "\(reason)"])
        move(id) { lifecycle in
            guard case .authorized(let authorized) = lifecycle else { return nil }
            return .failed(authorized.fail(reason))
        }
    }

    private func startDeactivation(_ id: ModuleID) -> Job? {
        guard let module = records[id]?.instance else {
            finishDeactivation(id, Outcome(result: .finished(nil), duration: .zero))
            return nil
        }
        return {
            await module.deactivate()
            return nil
        }
    }

    private func finishDeactivation(_ id: ModuleID, _ outcome: Outcome) {
        if case .timedOut = outcome.result {
            runtimeDiagnostics.append(
                Diagnostic(
                    .deactivationTimedOut, .warning, modules: [id],
                    message: "\(id)'s deactivate() did not finish within \(options.deactivationTimeLimit); "
                        + "the kernel stopped waiting and may have left resources behind.",
                    fix: "Make \(id)'s deactivate() return promptly, or raise KernelOptions.deactivationTimeLimit."))
        }
        records[id]?.instance = nil
        move(id) { lifecycle in
            guard case .active(let active) = lifecycle else { return nil }
            return .deactivated(active.deactivate())
        }
    }
}
