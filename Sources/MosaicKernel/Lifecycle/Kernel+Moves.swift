internal import Mosaic

/// How modules move through their lifecycle, and how the graph is made again when the catalog changes.
extension Kernel {
    /// Moves the module at `index` along its lifecycle with `step`, which returns `nil` when the module is not in
    /// a state it moves from; announces the change.
    func move(_ index: Int, _ step: (Lifecycle) -> Lifecycle?) {
        // One access to the record for the whole step (each separate one is an exclusivity check at run time).
        guard let (from, to) = Self.move(&records[index], step), from != to else { return }
        // Links wait for a module on its way up (nil) and are refused otherwise; tell the router only of a change.
        let unavailable = Self.unavailability(to)
        if unavailable != nil || Self.unavailability(from) != nil {
            deeplinkRouter.setUnavailable(graph.nodes[index].id, reason: unavailable)
        }
        if from == .standby || to == .standby { standbyChanged(index, from: from, to: to) }
        recordTransition(index, from: from, to: to)
        moduleVersion.advance()
        changes.send(StateChange(id: graph.nodes[index].id, from: from, to: to))
    }

    /// Moves `record` with `step`; the states it left and entered, or `nil` when `step` did not move it.
    private static func move(_ record: inout Record, _ step: (Lifecycle) -> Lifecycle?) -> (ModuleState, ModuleState)? {
        guard let next = step(record.lifecycle) else { return nil }
        let from = record.lifecycle.state
        record.lifecycle = next
        return (from, next.state)
    }

    /// Why links to a module in `state` cannot wait for it, or `nil` when it is active or on its way up.
    static func unavailability(_ state: ModuleState) -> String? {
        switch state {
        case .discovered, .validated, .authorized, .standby, .active: nil
        case .deactivated: "deactivated"
        case .failed(let reason): "failed: \(reason)"
        case .blocked(_, let reason): "blocked: \(reason)"
        }
    }

    /// The graph `catalog` would make with this kernel's host, services and standard.
    func makeGraph(_ catalog: ModuleCatalog) -> ModuleGraph {
        ModuleGraph(
            catalog: isolation.wrap(catalog), host: host, services: hostServices, standard: standard,
            extensionPoints: extensionPoints)
    }

    /// Replaces the graph after the catalog changed, keeping each remaining module's record and built services.
    /// The boxes of `forgotten`, a module uninstalled, are not kept.
    func rebuildGraph(forgetting forgotten: ModuleID? = nil) {
        let previous = Dictionary(uniqueKeysWithValues: zip(graph.ids, records))
        graph = makeGraph(catalog)
        serviceRuntime = ServiceRuntime(
            graph: graph, previous: serviceRuntime, forgetting: forgotten, preview: options.preview,
            observer: ServiceTelemetry.observer(for: telemetry))
        records = graph.nodes.map { previous[$0.id] ?? Record() }
        gauges.states = [:]
        deeplinkRouter.setOwners(graph.deeplinkOwners)
        // A module installed again starts afresh; `move` tells the router only of changes, so forget its old state.
        if let forgotten { deeplinkRouter.setUnavailable(forgotten, reason: nil) }
    }

    /// Discovered → validated, or failed when the module has a fault of its own.
    func validate(_ index: Int) {
        var fault = graph.nodes[index].fault
        if fault == nil, let problem = loadConfiguration(index) {
            fault = problem
            failures[graph.nodes[index].id] = problem
        }
        move(index) { lifecycle in
            guard case .discovered(let discovered) = lifecycle else { return nil }
            return fault.map { .failed(discovered.fail($0)) } ?? .validated(discovered.validate())
        }
    }
}
