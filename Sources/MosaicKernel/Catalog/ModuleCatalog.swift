public import Mosaic

/// Every module the host knows about, from code and from manifest files, before anything is validated.
///
/// ```swift
/// var catalog = ModuleCatalog(groups: [CoreModules.self, FeatureModules.self])
/// catalog.discover(in: "/etc/ghost/modules", entryPoints: ["WeatherModule": ModuleFactory(WeatherModule.self)])
/// ```
/// The same module listed twice (in two groups, or in code and in a file) is kept once. Two *different* modules
/// with one identifier are both kept, so that validation reports the clash instead of hiding one of them.
public struct ModuleCatalog: Sendable {
    /// Where an entry came from.
    public enum Origin: Sendable, Hashable, CustomStringConvertible {
        /// Listed in code.
        case code
        /// Read from a manifest file at this path.
        case manifestFile(String)

        /// `code`, or the manifest file's path.
        public var description: String {
            switch self {
            case .code: "code"
            case .manifestFile(let path): path
            }
        }
    }

    /// One module of the catalog.
    public struct Entry: Sendable {
        /// How to make the module, with its manifest.
        public let factory: ModuleFactory
        /// Where it came from.
        public let origin: Origin
        /// The module's manifest.
        public var manifest: Manifest { factory.manifest }

        init(factory: ModuleFactory, origin: Origin) {
            self.factory = factory
            self.origin = origin
        }
    }

    /// The modules, in the order they were listed or found.
    public private(set) var entries: [Entry] = []
    /// Problems met while discovering modules (unreadable or malformed manifest files, unknown entry points).
    public internal(set) var diagnostics: [Diagnostic] = []
    /// The module types listed: adding one looks it up here instead of scanning every entry (which made a catalog
    /// of many types quadratic to build).
    private var types: Set<ObjectIdentifier> = []
    /// Every identifier the manifests name, each kept once (see ``add(_:origin:)``).
    private var identifiers: Set<ModuleID> = []

    /// An empty catalog.
    public init() {}

    /// A catalog of module types listed in code.
    public init(modules: [any Module.Type]) {
        for module in modules { add(module) }
    }

    /// A catalog aggregated from groups, in order.
    public init(groups: [any ModuleGroup.Type]) {
        self.init(modules: groups.flatMap { $0.modules })
    }

    /// Adds a module type; a type already present is not added twice.
    public mutating func add(_ module: any Module.Type) {
        add(ModuleFactory(module: module))
    }

    /// Adds a module made by `factory`; a factory of a type already present is not added twice.
    ///
    /// The manifest's identifiers (its own and its dependencies') then share their text with every equal one the
    /// catalog already holds: validation finds each dependency's module by its identifier, and two texts that are
    /// one compare without either being read.
    public mutating func add(_ factory: ModuleFactory, origin: Origin = .code) {
        if let type = factory.type, !types.insert(type).inserted { return }
        var factory = factory
        if let kept = kept(factory.manifest.id) { factory.manifest.id = kept }
        for number in factory.manifest.dependencies.indices {
            if let kept = kept(factory.manifest.dependencies[number].id) {
                factory.manifest.dependencies[number].id = kept
            }
        }
        entries.append(Entry(factory: factory, origin: origin))
    }

    /// The equal identifier the catalog holds when its text is stored apart from `id`'s; `nil` when `id` is the
    /// first of its text (it is kept), or already shares it.
    private mutating func kept(_ id: ModuleID) -> ModuleID? {
        let kept = identifiers.insert(id).memberAfterInsert
        // Text of up to 15 bytes is stored in the value itself, never apart.
        guard id.rawValue.utf8.count > 15 else { return nil }
        let storage = { (id: ModuleID) in id.rawValue.utf8.withContiguousStorageIfAvailable { $0.baseAddress } }
        return storage(kept) == storage(id) ? nil : kept
    }
}

extension ModuleCatalog {
    /// The catalog with each factory replaced by what `transform` makes of it (the same module, run another way).
    func mapFactories(_ transform: (ModuleFactory) -> ModuleFactory) -> ModuleCatalog {
        var mapped = self
        mapped.entries = entries.map { Entry(factory: transform($0.factory), origin: $0.origin) }
        return mapped
    }

    /// Removes every entry with identifier `id`.
    mutating func remove(_ id: ModuleID) {
        entries.removeAll { $0.manifest.id == id }
        types = Set(entries.compactMap(\.factory.type))
    }
}

extension ModuleCatalog {
    /// Every entitlement the modules name: in their manifests, contributions and deeplink handlers.
    public var declaredEntitlements: Set<Entitlement> {
        zip(entries, registrars).reduce(into: []) { declared, pair in
            declared.formUnion(pair.0.manifest.entitlements)
            declared.formUnion(pair.1.contributions.compactMap(\.entitlement))
            declared.formUnion(pair.1.deeplinks.compactMap(\.entitlement))
        }
    }

    /// Every extension point the modules contribute to that is not a standard one, each once, in catalog order:
    /// what a host written for these modules declares.
    public var contributedPoints: [AnyExtensionPoint] {
        var points: [AnyExtensionPoint] = []
        for point in registrars.flatMap({ $0.contributions.map(\.point) })
        where !AnyExtensionPoint.builtIn.contains(point) && !points.contains(point) {
            points.append(point)
        }
        return points
    }

    /// What each entry declares, in order; declaring runs no factory.
    private var registrars: [ModuleRegistrar] {
        entries.map { entry in
            var registrar = ModuleRegistrar()
            entry.factory.register(&registrar)
            return registrar
        }
    }
}
