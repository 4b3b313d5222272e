public import Mosaic

extension ModuleGraph {
    /// One planned "activates after" relation: `from` activates after `to`.
    public struct Edge: Sendable, Hashable {
        /// Why the edge exists.
        public enum Kind: String, Sendable, Hashable {
            /// `from` requires `to` in its manifest.
            case required
            /// `from` can use `to` (an optional dependency).
            case optional
            /// `from` uses a service `to` provides, without naming `to` in its manifest.
            case service
        }

        /// The module that depends.
        public let from: ModuleID
        /// The module depended on.
        public let to: ModuleID
        /// Why.
        public let kind: Kind
    }

    /// Every edge the plan orders activation by, module by module in catalog order: declared dependencies and
    /// those inferred from service use.
    ///
    /// What `graph` draws; a host can also hold its architecture to a rule with it, in a test:
    ///
    /// ```swift
    /// let graph = ModuleGraph(catalog: ModuleCatalog(groups: AppManifest.groups), host: AppManifest.host)
    /// let features = Set(FeatureModules.modules.map { $0.manifest.id })
    /// // Feature modules talk through services of core modules, never to each other.
    /// #expect(!graph.edges.contains { features.contains($0.from) && features.contains($0.to) })
    /// ```
    public var edges: [Edge] {
        nodes.indices.flatMap { index in
            let from = nodes[index].id
            let declared = Set(self[manifestAt: index].dependencies.map(\.id))
            return required[index].map { target in
                let id = nodes[target].id
                return Edge(from: from, to: id, kind: declared.contains(id) ? .required : .service)
            } + optional[index].map { Edge(from: from, to: nodes[$0].id, kind: .optional) }
        }
    }

    /// The manifest of module `id`, if the graph has it.
    public func manifest(of id: ModuleID) -> Manifest? { position[id].map { self[manifestAt: $0] } }

    /// What module `id` declared at registration (no module code beyond `register(in:)` runs), if the graph has it.
    package func registration(of id: ModuleID) -> ModuleRegistrar? { node(id)?.registrar }

    /// The level of module `id` in ``levels`` (0: depends on nothing), or `nil` for a module in a cycle.
    public func level(of id: ModuleID) -> Int? { levels.firstIndex { $0.contains(id) } }

    /// The registration that provides `key` and its module (`nil`: the host), if anything provides it.
    package func provider(of key: AnyServiceKey) -> (module: ModuleID?, registration: ServiceRegistration)? {
        serviceProvider(of: key).map { provider in (provider.module.map { nodes[$0].id }, provider.registration) }
    }
}
