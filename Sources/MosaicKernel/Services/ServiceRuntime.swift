internal import Mosaic

/// The services of a running kernel: one box per chosen registration, the table of them all, and the view each
/// module resolves through.
struct ServiceRuntime {
    /// A box is identified by who provides which service, so a rebuild keeps the instances already built.
    struct BoxKey: Hashable {
        let provider: ModuleID
        let key: AnyServiceKey
    }

    /// The provider name of services the host registers.
    static let hostID: ModuleID = "mosaic.host"

    /// The box of each service, at the service's position in the graph's ``ModuleGraph/services``.
    private(set) var boxes: [ServiceBox] = []
    /// For each graph position, the boxes of the services that module provides.
    private(set) var provided: [[ServiceBox]] = []
    /// For each graph position, the boxes of the services that module registered `eager`: built before it activates.
    private(set) var eager: [[ServiceBox]] = []
    /// For each graph position, what that module may resolve.
    private(set) var views: [Services] = []
    /// What the host may resolve: everything.
    private(set) var hostView: Services
    /// Every box, for building a module's services before it activates.
    private(set) var table: ServiceTable

    /// The runtime for `graph`, reusing the boxes of `previous` that still provide the same service, except those
    /// of `forgotten` (a module uninstalled: installed again under its identifier, it starts afresh).
    init(
        graph: ModuleGraph, previous: ServiceRuntime? = nil, forgetting forgotten: ModuleID? = nil, preview: Bool,
        observer: (any ServiceObserver)? = nil
    ) {
        var reusable: [BoxKey: ServiceBox] = [:]
        for box in previous?.boxes ?? [] where box.provider != forgotten {
            reusable[BoxKey(provider: box.provider, key: box.key)] = box
        }
        provided = Array(repeating: [], count: graph.nodes.count)
        eager = provided
        boxes.reserveCapacity(graph.services.count)
        var hostBoxes: [ServiceBox] = []
        for provider in graph.services {
            let owner = provider.module.map { graph.nodes[$0].id } ?? Self.hostID
            let kept = reusable.isEmpty ? nil : reusable[BoxKey(provider: owner, key: provider.registration.key)]
            let box = kept ?? provider.registration.makeBox(owner, preview)
            boxes.append(box)
            if let module = provider.module {
                provided[module].append(box)
                if provider.registration.eager { eager[module].append(box) }
            } else {
                box.activate()
                hostBoxes.append(box)
            }
        }
        let all = ServiceTable(boxes, observer: observer)
        table = all
        hostView = Services(module: Self.hostID, visible: all, all: all)
        let hostOnly = ServiceTable(hostBoxes)
        views = graph.nodes.indices.map { index in
            let used = graph.nodes[index].registrar.services.used
            guard !provided[index].isEmpty || !used.isEmpty else {
                return Services(module: graph.nodes[index].id, visible: hostOnly, all: all)
            }
            let usedBoxes = used.compactMap { all.box(for: $0.id)?.takeUnretainedValue() }
            return Services(
                module: graph.nodes[index].id, visible: ServiceTable(hostBoxes + usedBoxes + provided[index]), all: all)
        }
    }

    /// Drops built instances: of cached services, or of every service.
    func reset(cachedOnly: Bool) {
        ServiceBox.reset(boxes, cachedOnly: cachedOnly)
    }
}
