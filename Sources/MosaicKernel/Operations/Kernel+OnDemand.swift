internal import Logging
public import Mosaic

/// Modules that start on their first use (`module.activation = .onDemand`): validated and authorized with the
/// others, then on standby until a use starts them, with what they require.
extension Kernel {
    /// Starts module `id` if it waits on standby, with the modules it requires, and returns its state once that
    /// settles: active, or failed with the reason. A module in any other state is left as it is.
    ///
    /// The uses a host does not route through the kernel call this: the kernel itself starts a module on standby
    /// for a link it handles, the content of a contribution it makes, and an event it subscribes to.
    /// - Throws: ``KernelError`` when there is no such module or the kernel is not running.
    @discardableResult
    public func start(_ id: ModuleID) async throws(KernelError) -> ModuleState {
        try await start(id, for: "Kernel.start(_:)")
    }

    /// Starts module `id` from standby for `use` (said in the log and the activation's cause).
    func start(_ id: ModuleID, for use: String) async throws(KernelError) -> ModuleState {
        try await exclusively { () async throws(KernelError) -> ModuleState in
            try requireRunning()
            guard let index = graph.position[id] else {
                throw KernelError(.unknownModule, "No module \(id) is installed; nothing was started.", module: id)
            }
            guard case .standby = records[index].lifecycle else { return records[index].lifecycle.state }
            records[index].demanded = true
            operationCause = .demand(use)
            logger.info("starting a module on demand", metadata: ["module": "\(id)", "use": "\(use)"])
            await reconcile()
            return records[index].lifecycle.state
        }
    }

    /// Starts module `id` for `use` and returns once it is active; throws the reason when it is not.
    nonisolated func startForUse(_ id: ModuleID, _ use: String) async throws {
        let state = try await start(id, for: use)
        guard state.isActive else {
            throw ModuleUnavailableError(
                .notStarted, module: id, message: "\(id) could not be started for \(use): it is \(state).")
        }
    }

    /// Splits the modules that may run and are not active into those that start now (each one that starts at boot
    /// or was asked for, and every module those require) and those that wait on standby, both in position order.
    func startingNow(_ verdicts: [Verdict]) -> (start: [Int], standby: [Int]) {
        let candidates = records.indices.filter { verdicts[$0].isRun && !records[$0].isActive }
        var starting = [Bool](repeating: false, count: records.count)
        var pending = candidates.filter { graph.nodes[$0].registrar.activation == .atBoot || records[$0].demanded }
        for index in pending { starting[index] = true }
        while let index = pending.popLast() {
            for dependency in graph.required[index] where !starting[dependency] && !records[dependency].isActive {
                starting[dependency] = true
                pending.append(dependency)
            }
        }
        return (candidates.filter { starting[$0] }, candidates.filter { !starting[$0] })
    }

    /// Puts the modules at `positions` on standby, listing their contributions in one change: each starts its
    /// module when the host builds its content (a tab shows without it).
    func standBy(_ positions: [Int]) {
        var listed: [(module: ModuleID, contributions: [(ContributionDeclaration, any Sendable)])] = []
        for index in positions {
            if case .standby = records[index].lifecycle { continue }
            move(index) { lifecycle in
                switch lifecycle {
                case .validated(let validated): .standby(validated.standBy())
                case .deactivated(let deactivated): .standby(deactivated.standBy())
                case .blocked(let blocked): .standby(blocked.unblock().standBy())
                case .discovered, .authorized, .standby, .active, .failed: nil
                }
            }
            guard case .standby = records[index].lifecycle, !graph.nodes[index].contributions.isEmpty else { continue }
            listed.append(standbyContributions(of: index))
        }
        contributionHub.replace(listed)
    }

    /// The contributions of the module at `index` as they are listed while it waits on standby.
    private func standbyContributions(
        of index: Int
    ) -> (module: ModuleID, contributions: [(ContributionDeclaration, any Sendable)]) {
        let id = graph.nodes[index].id
        let host = self.host
        let store = contributionHub
        return (
            id,
            graph.nodes[index].contributions.map { declaration in
                let use = "the content of \(declaration.id) in \(declaration.point.id)"
                let contribution = declaration.bindStandby(id, host) { [weak self] in
                    guard let self else { throw KernelError(.shutDown, "The kernel was shut down.") }
                    try await startForUse(id, use)
                    guard let live = store.contribution(of: id, point: declaration.point.id, id: declaration.id)
                    else {
                        throw ModuleUnavailableError(
                            .notStarted, module: id, message: "\(id) started, then stopped before \(use).")
                    }
                    return live
                }
                return (declaration, contribution)
            }
        )
    }

    /// Tells the router and the event hub that the module at `index` entered or left standby (links to it and
    /// events it subscribes to start it); once it leaves standby for anything but starting, its contributions go.
    func standbyChanged(_ index: Int, from: ModuleState, to: ModuleState) {
        let id = graph.nodes[index].id
        let subscribed = graph.nodes[index].registrar.interactions.subscribed
        if to == .standby {
            deeplinkRouter.setStandby(id, true)
            eventHub.standbySubscribers.set(id, subscribingTo: subscribed, isOnStandby: true)
        } else if from == .standby {
            deeplinkRouter.setStandby(id, false)
            eventHub.standbySubscribers.set(id, subscribingTo: subscribed, isOnStandby: false)
            if to != .authorized { contributionHub.remove(id) }
        }
    }
}

extension ModuleGraph {
    /// What starts module `id` when it waits on standby, in words: empty for a module that starts at boot (or one
    /// the graph does not have).
    ///
    /// ```swift
    /// graph.startTriggers(of: "com.ghost.sports")
    /// // ["a link to sports/team", "the content of sports.scores in mosaic.dashboard-widgets", …]
    /// ```
    public func startTriggers(of id: ModuleID) -> [String] {
        guard let index = position[id], nodes[index].registrar.activation == .onDemand else { return [] }
        return startTriggers(of: index)
    }

    /// The uses that start the module at `index` when it waits on standby, in words.
    func startTriggers(of index: Int) -> [String] {
        let node = nodes[index]
        var triggers = node.registrar.deeplinks.map { "a link to \($0.feature)\($0.action.map { "/\($0)" } ?? "")" }
        triggers += node.contributions.filter(\.startsModule).map { "the content of \($0.id) in \($0.point.id)" }
        triggers += node.registrar.interactions.subscribed.map { "an event \($0)" }
        triggers += dependents[index].filter { required[$0].contains(index) }.map { "\(nodes[$0].id) starting" }
        return triggers
    }

    /// Warns about each on-demand module that nothing in the app starts.
    mutating func warnAboutUnstartableModules() {
        for index in nodes.indices where nodes[index].registrar.activation == .onDemand && !isStartable(index) {
            let id = nodes[index].id
            report(
                .startsOnDemand, .warning, [id],
                "\(id) starts on demand, but nothing in the app starts it: it handles no link, contributes no content, "
                    + "subscribes to no event and no module requires it.",
                fix: "Start it with Kernel.start(_:) from the host, or let it start at boot (remove "
                    + "module.activation = .onDemand).")
        }
    }

    /// Whether anything in the app starts the module at `index` when it waits on standby.
    private func isStartable(_ index: Int) -> Bool {
        let node = nodes[index]
        return !node.registrar.deeplinks.isEmpty || node.contributions.contains(where: \.startsModule)
            || !node.registrar.interactions.subscribed.isEmpty
            || dependents[index].contains { required[$0].contains(index) }
    }
}
