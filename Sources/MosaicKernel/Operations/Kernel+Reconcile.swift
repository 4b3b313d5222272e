internal import Logging
internal import Mosaic
internal import Tracing

extension Kernel {
    /// Brings every module to the state the graph and the policy call for: stops what may no longer run
    /// (dependents first), marks what is failed or blocked with its reason, and starts what may run (dependencies
    /// first). Boot, grant, revoke, install and uninstall all end here.
    func reconcile() async {
        contributionHub.setGranted(policy.granted)
        deeplinkRouter.setGranted(policy.granted)
        let authorization = telemetry.startSpan(SpanName.authorize)
        var verdicts = currentVerdicts()
        authorization.attributes.set(SpanKey.diagnostics, value: .int64(Int64(authorizationDiagnostics.count)))
        authorization.end()
        await deactivate(records.indices.filter { records[$0].isActive && !verdicts[$0].isRun })
        settle(verdicts)
        let failuresBefore = failures.count
        let planning = telemetry.startSpan(SpanName.plan)
        // In position order: a run starts modules by readiness and position, whatever order they are listed in.
        let (starting, standby) = startingNow(verdicts)
        planning.attributes.set(SpanKey.modules, value: .int64(Int64(starting.count)))
        planning.end()
        standBy(standby)
        await activate(starting)
        if failures.count != failuresBefore {
            verdicts = currentVerdicts()
            settle(verdicts)
        }
        operationCause = .boot
        recordDiagnostics()
    }

    /// Why the module at `index` activates now: the operation's own subject, or a dependency that came up.
    private func cause(of index: Int, starting: [Bool]) -> ActivationCause {
        switch operationCause {
        case .boot: return .boot
        case .grant(let entitlement) where graph[manifestAt: index].entitlements.contains(entitlement):
            return operationCause
        case .install where records[index].cause == .install && records[index].activationTime == nil:
            return .install
        case .demand where records[index].demanded:
            return operationCause
        default:
            let dependency = graph.required[index].first { starting[$0] }
            return dependency.map { .dependency(graph.nodes[$0].id) } ?? operationCause
        }
    }

    /// The verdict on every module under the current policy and failures; keeps the authorization diagnostics.
    func currentVerdicts() -> [Verdict] {
        let (verdicts, diagnostics) = graph.verdicts(
            under: policy, failures: failures, leaving: leaving, heldOff: heldOff)
        authorizationDiagnostics = diagnostics
        return verdicts
    }

    /// Gives every module that may not run the blocked state and reason its verdict names.
    private func settle(_ verdicts: [Verdict]) {
        for (index, verdict) in verdicts.enumerated() {
            if case .failed(let reason) = verdict, case .deactivated(let deactivated) = records[index].lifecycle {
                // Stopped by a fault while it ran (its process ended): failed, not merely stopped.
                move(index) { _ in .failed(deactivated.fail(reason)) }
                continue
            }
            guard case .blocked(let blockers, let reason, _) = verdict else { continue }
            move(index) { lifecycle in
                switch lifecycle {
                case .validated(let validated): .blocked(validated.block(by: blockers, reason: reason))
                case .authorized(let authorized): .blocked(authorized.block(by: blockers, reason: reason))
                case .standby(let standby): .blocked(standby.block(by: blockers, reason: reason))
                case .deactivated(let deactivated): .blocked(deactivated.block(by: blockers, reason: reason))
                case .blocked(let blocked): .blocked(blocked.block(by: blockers, reason: reason))
                case .discovered, .active, .failed: nil
                }
            }
        }
    }

    /// Activates the modules at `positions` (in dependency order, concurrently where they are independent). A
    /// module whose required dependency did not come up is left authorized for ``settle(_:)`` to block.
    func activate(_ positions: [Int]) async {
        var starting = [Bool](repeating: false, count: records.count)
        for index in positions { starting[index] = true }
        // In position order, not activation order: records are then read one after another, not all over memory.
        for index in records.indices where starting[index] {
            records[index].cause = cause(of: index, starting: starting)
            move(index) { lifecycle in
                switch lifecycle {
                case .validated(let validated): .authorized(validated.authorize())
                case .deactivated(let deactivated): .authorized(deactivated.authorize())
                case .blocked(let blocked): .authorized(blocked.unblock().authorize())
                case .standby(let standby): .authorized(standby.authorize())
                case .discovered, .authorized, .active, .failed: nil
                }
            }
        }
        await runInDependencyOrder(positions, kind: .activation)
    }

    /// Deactivates the modules at `positions`, each after every module among them that depends on it.
    func deactivate(_ positions: [Int]) async {
        await runInDependencyOrder(positions.reversed(), kind: .deactivation)
    }

    /// The job that activates the module at `index`, or `nil` when a required dependency is not active.
    ///
    /// The module's ledger opens here: everything granted from now on is recorded in it, so a failure or a later
    /// deactivation takes it all back. Before `init`, the job builds the services the module registered `eager`: a
    /// factory that throws there fails this module, with the service named. Every other service is built when it is
    /// first resolved.
    func startActivation(_ index: Int) -> ModuleJob? {
        guard case .authorized = records[index].lifecycle else { return nil }
        // A loop, not `allSatisfy`: the closure checked the actor's executor once per dependency.
        for dependency in graph.required[index] where !records[dependency].isActive { return nil }
        let id = graph.nodes[index].id
        // The ledger stops the module publishing when it closes.
        let ledger = ModuleLedger(module: id, closing: eventHub)
        records[index].ledger = ledger
        let provided = serviceRuntime.provided[index]
        let eager = serviceRuntime.eager[index]
        // Only a module that declares configuration keys has values read for it.
        let configuration =
            graph.nodes[index].registrar.configurationKeys.isEmpty
            ? ModuleConfiguration() : configurationReads.values[id] ?? ModuleConfiguration()
        let services = serviceRuntime.views[index]
        let version = graph[manifestAt: index].version
        let make = graph.entry(of: index).factory.make
        let table = serviceRuntime.table
        // The persisted keys the module declares are loaded before it runs, so that its reads never wait.
        let stateKeys = graph.nodes[index].registrar.interactions.stateKeys
        let declaredWrites = Set(graph.nodes[index].registrar.interactions.written)
        // The job grants the module its services and the right to publish, and makes its context, on its worker:
        // the kernel's actor starts and finishes every module in turn, and this was half its work per module. Should
        // the ledger be closed already (the kernel gave up on the job), what the job grants is taken back at once.
        return { [self] in
            if !provided.isEmpty {
                for box in provided { box.activate() }
                ledger.hold { ServiceBox.deactivate(provided) }
            }
            eventHub.activate(id)
            if !ledger.isOpen { eventHub.deactivate(id) }
            let (events, state) = handles(of: id, ledger: ledger, services: services, declaredWrites: declaredWrites)
            let context = ActivationContext(
                id: id, version: version, shared: contextShared, services: services,
                contributions: Contributions(ModuleContributionSource(store: weakContributionHub, ledger: ledger)),
                events: events, state: state,
                ledger: ledger,
                configuration: configuration.fed(by: ModuleConfigurationFeed(store: configurationHub, ledger: ledger))
            )
            if !stateKeys.isEmpty { await stateHub.load(stateKeys) }
            do {
                return try await context.services.call {
                    for box in eager { try Self.prebuild(box, table) }
                    let module = make()
                    try await module.activate(context)
                    return JobResult(module: module, context: context)
                }
            } catch {
                await ledger.quiesce()
                ledger.withdraw()
                throw error
            }
        }
    }

    /// Builds `box`'s service ahead of its first use; a placeholder (``unimplemented(_:_:)``) is left to fail
    /// where it is resolved, which is what it is for.
    private static func prebuild(_ box: ServiceBox, _ table: ServiceTable) throws(ServiceError) {
        do {
            try box.prebuild(table)
        } catch  where error.code == .unimplemented {
        }
    }

    func finishActivation(_ index: Int, _ outcome: Outcome) {
        let id = graph.nodes[index].id
        switch outcome.result {
        case .finished(let activated):
            records[index].instance = activated.module
            records[index].context = activated.context
            records[index].activationTime = outcome.duration
            // Most modules contribute nothing and handle no links: no grant to record for them.
            if let context = records[index].context, let ledger = records[index].ledger {
                if !graph.nodes[index].contributions.isEmpty {
                    // Replaces the module's standby contributions, if it waited on standby, in one change.
                    contributionHub.replace(
                        id, graph.nodes[index].contributions.map { ($0, $0.bind(id, context)) })
                    ledger.hold(.entry) { [contributionHub] in contributionHub.remove(id) }
                }
                if !graph.nodes[index].registrar.deeplinks.isEmpty {
                    deeplinkRouter.activate(
                        id, graph.nodes[index].registrar.deeplinks.map { Self.route($0, of: id, context) })
                    ledger.hold(.entry) { [deeplinkRouter] in deeplinkRouter.deactivate(id) }
                }
            }
            move(index) { lifecycle in
                guard case .authorized(let authorized) = lifecycle else { return nil }
                return .active(authorized.activate())
            }
        case .threw(let error as ServiceError):
            fail(
                index, after: outcome.duration, code: .activationFailed,
                reason: "a service it needs could not be built or resolved: \(error.message.prefix(500))",
                fix: "Fix \(error.service)'s registration or factory"
                    + (error.provider.map { " in \($0)" } ?? "") + "; \(id) starts once it resolves.")
        case .threw(let error):
            fail(
                index, after: outcome.duration, code: .activationFailed,
                reason: "activate(_:) threw: \(String(describing: error).prefix(500))",
                fix: "Fix the error in \(id)'s activate(_:); its dependents start once it activates.")
        case .timedOut:
            fail(
                index, after: outcome.duration, code: .activationTimedOut,
                reason: "activate(_:) did not finish within \(options.activationTimeLimit); it was cancelled.",
                fix: "Make \(id)'s activate(_:) return promptly (start long work with context.task), or raise "
                    + "KernelOptions.activationTimeLimit.")
        }
    }

    private func fail(_ index: Int, after duration: Duration, code: Diagnostic.Code, reason: String, fix: String) {
        let id = graph.nodes[index].id
        failures[id] = reason
        records[index].activationTime = duration
        records[index].ledger?.withdraw()
        records[index].ledger = nil
        records[index].context = nil
        // The contributions it listed on standby, if it waited there.
        contributionHub.remove(id)
        runtimeDiagnostics.append(
            Diagnostic(code, .error, modules: [id], message: "\(id) failed: \(reason)", fix: fix))
        logger.error("module failed to activate", metadata: ["module": "\(id)", "reason": "\(reason)"])
        move(index) { lifecycle in
            guard case .authorized(let authorized) = lifecycle else { return nil }
            return .failed(authorized.fail(reason))
        }
    }

    /// The job that deactivates the module at `index`: its ledger first stops new work reaching it and waits for
    /// the link handlers, content builds and tasks under way, then its `deactivate()` runs; `nil` (after marking it
    /// deactivated) when there is no instance to call.
    ///
    /// The deactivation time limit covers the whole job, the wait included. When the kernel stops waiting before
    /// the wait is over, it takes everything back (closing the ledger), and this instance's `deactivate()` never runs
    /// afterwards: by then the module may be active again, with another instance that the late call would disturb.
    func startDeactivation(_ index: Int) -> ModuleJob? {
        if options.watchesReleases { watchReleases(of: index) }
        let ledger = records[index].ledger
        guard let module = records[index].instance else {
            finishDeactivation(index, Outcome(result: .finished(.nothing), duration: .zero))
            return nil
        }
        let services = serviceRuntime.views[index]
        let logger = logger
        let id = graph.nodes[index].id
        return {
            await ledger?.quiesce()
            if let ledger, !ledger.isOpen {
                logger.warning(
                    "deactivate() was not run: the kernel stopped waiting for the module's work to end first",
                    metadata: ["module": "\(id)"])
                return .nothing
            }
            do {
                try await services.call { await module.deactivate() }
            } catch {
                logger.warning(
                    "deactivate() met a failure", metadata: ["module": "\(id)", "error": "\(error)"])
            }
            return .nothing
        }
    }

    func finishDeactivation(_ index: Int, _ outcome: Outcome) {
        if case .timedOut = outcome.result {
            let id = graph.nodes[index].id
            runtimeDiagnostics.append(
                Diagnostic(
                    .deactivationTimedOut, .warning, modules: [id],
                    message: "\(id)'s deactivate() did not finish within \(options.deactivationTimeLimit); "
                        + "the kernel stopped waiting and may have left resources behind.",
                    fix: "Make \(id)'s deactivate() return promptly, or raise KernelOptions.deactivationTimeLimit."))
        }
        records[index].instance = nil
        records[index].demanded = false
        // Everything the module still holds goes, newest first: services (their instances are released), the
        // right to write state and publish, subscriptions and observers.
        records[index].ledger?.withdraw()
        records[index].ledger = nil
        records[index].context = nil
        move(index) { lifecycle in
            guard case .active(let active) = lifecycle else { return nil }
            return .deactivated(active.deactivate())
        }
    }
}
