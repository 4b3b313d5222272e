public import Mosaic

/// The validated module graph: every module of a catalog, checked as a whole against a host, with the order in
/// which they can activate.
///
/// Building it reads only the modules' declarations (`register(in:)`, and `init()` for their `@Injected` uses) and
/// activates nothing, so it is what a unit test or a command-line check calls to learn everything wrong with a set
/// of modules at once:
///
/// ```swift
/// let graph = ModuleGraph(catalog: ModuleCatalog(groups: AppManifest.groups), host: host)
/// #expect(graph.diagnostics.filter(atLeast: .error).isEmpty)
/// ```
public struct ModuleGraph: Sendable {
    /// One module of the graph, with what validation decided about it. Other modules are named by their
    /// position in ``ModuleGraph/nodes``, so walking the graph hashes no strings.
    struct Node: Sendable {
        /// The position of the module's catalog entry in ``ModuleGraph/entries``. (A position, not the entry: walks
        /// over the nodes read fewer cache lines.)
        let entry: Int
        /// The module's identifier. (Its manifest stays in its entry: ``ModuleGraph/subscript(manifestAt:)``.)
        let id: ModuleID
        /// What the module registered: its services and uses.
        var registrar = ModuleRegistrar()
        /// Why the module itself can never run here, or `nil`.
        var fault: String?
        /// Whether the module is in a dependency cycle.
        var inCycle = false
        /// Required dependencies that are missing or at the wrong version, with the reason.
        var unmet: [(id: ModuleID, reason: String)] = []
        /// The module's contributions that validation accepted.
        var contributions: [ContributionDeclaration] = []
    }

    /// The host the graph was checked against.
    public let host: HostEnvironment
    /// Every problem found, in a stable order: discovery problems first, then module by module.
    public internal(set) var diagnostics: [Diagnostic]
    /// The catalog's entries, which ``Node/entry`` points into.
    let entries: [ModuleCatalog.Entry]
    /// The modules in catalog order, one per identifier (the first entry of an identifier claimed twice).
    var nodes: [Node] = []
    /// Each identifier's position in ``nodes``.
    var position: [ModuleID: Int] = [:]
    /// Each module's required dependencies that are present at an accepted version, then the modules whose
    /// services it uses (see ``connect(declared:used:)``).
    var required = Adjacency()
    /// Each module's optional dependencies that are present at an accepted version (and not required).
    var optional = Adjacency()
    /// The modules that depend on each module (required or optional), in position order.
    var dependents = Adjacency()
    /// Positions in ``nodes`` of every module not in a cycle, each after all of its dependencies.
    var order: [Int] = []
    /// The registration chosen for each service, one position per service in the order first registered (host
    /// first), so that diagnostics come in a stable order and the runtime keeps its boxes in a flat array.
    var services: [ServiceProvider] = []
    /// Each service's position in ``services``.
    var servicePositions: [AnyServiceKey: Int] = [:]
    /// The host's extension points by identifier.
    var points: [String: AnyExtensionPoint] = [:]
    /// The module that handles each feature and action.
    var deeplinkOwners: [DeeplinkRouter.RouteKey: ModuleID] = [:]
    /// ``activationOrder`` cut into levels: a module's level is one more than its deepest dependency's, so the
    /// modules of one level do not depend on each other and may activate together.
    public internal(set) var levels: [[ModuleID]] = []

    /// Validates `catalog`, collecting every problem.
    ///
    /// Each module is checked against:
    /// - `host`: identifiers, compatibility and dependencies;
    /// - the services the host provides (`services`) and the host's `standard`;
    /// - the built-in extension points and `extensionPoints`, for its contributions.
    public init(
        catalog: ModuleCatalog, host: HostEnvironment, services: ServiceRegistrar = ServiceRegistrar(),
        standard: (any Standard)? = nil, extensionPoints: [AnyExtensionPoint] = []
    ) {
        self.host = host
        self.diagnostics = catalog.diagnostics
        self.entries = catalog.entries
        collectNodes()
        for index in nodes.indices { checkModule(index) }
        let declared = resolveDependencies()
        let used = resolveServices(host: services, standard: standard)
        connect(declared: declared, used: used)
        checkContributions(points: AnyExtensionPoint.builtIn + extensionPoints)
        checkDeeplinks()
        // Planning orders every module unless some are in a cycle; only then are the cycles listed (which needs
        // per-module lists most graphs never use), and the plan made again without them.
        plan()
        if order.count < nodes.count {
            findCycles()
            plan()
        }
        warnAboutUnstartableModules()
    }

    /// The identifiers in catalog order.
    public var ids: [ModuleID] { nodes.map(\.id) }

    /// Every module not in a dependency cycle, each after all of its dependencies; ties keep catalog order.
    public var activationOrder: [ModuleID] { order.map { nodes[$0].id } }

    /// The catalog entry of the module at `index`.
    func entry(of index: Int) -> ModuleCatalog.Entry { entries[nodes[index].entry] }

    /// The manifest of the module at `index`, lent in place: reading a field copies that field alone (copying a
    /// whole manifest retains a dozen references, and a node that kept its own copy was twice the size).
    subscript(manifestAt index: Int) -> Manifest {
        _read { yield entries[nodes[index].entry].manifest }
    }

    /// The module with identifier `id`, if the graph has it.
    func node(_ id: ModuleID) -> Node? { position[id].map { nodes[$0] } }

    /// The identifiers of the modules at `positions`.
    func ids(_ positions: [Int]) -> [ModuleID] { positions.map { nodes[$0].id } }

    /// Groups entries by identifier; a second, different module under one identifier faults the identifier.
    private mutating func collectNodes() {
        var claimants: [Int: [ModuleCatalog.Entry]] = [:]
        position.reserveCapacity(entries.count)
        nodes.reserveCapacity(entries.count)
        for number in entries.indices {
            let id = entries[number].manifest.id
            // One hash of the identifier, unless it is claimed twice: then the first entry gets it back.
            if let existing = position.updateValue(nodes.count, forKey: id) {
                position[id] = existing
                claimants[existing, default: [entries[nodes[existing].entry]]].append(entries[number])
            } else {
                nodes.append(Node(entry: number, id: id))
                // Registered in place: a registrar is a dozen lists, and copying one into its node retained each.
                entries[number].factory.register(&nodes[nodes.count - 1].registrar)
            }
        }
        for (index, entries) in claimants.sorted(by: { $0.key < $1.key }) {
            let id = nodes[index].id
            let sources = entries.map { "\($0.factory.name) (\($0.origin))" }.joined(separator: " and ")
            report(
                .duplicateIdentifier, .error, [id],
                "\(entries.count) different modules claim the identifier \(id): \(sources).",
                fix: "Give each module its own identifier, or list only one of them.", fault: true)
        }
    }

    /// Records a diagnostic; when `fault` is set, the first module named can never run here. A diagnostic about a
    /// module read from a manifest file names the file, and `keyPath` within it when given.
    mutating func report(
        _ code: Diagnostic.Code, _ severity: Diagnostic.Severity, _ modules: [ModuleID], _ message: String,
        fix: String, fault: Bool = false, keyPath: String? = nil
    ) {
        var location: Diagnostic.Location?
        if let id = modules.first, let index = position[id], case .manifestFile(let path) = entry(of: index).origin {
            location = Diagnostic.Location(file: path, keyPath: keyPath)
        }
        diagnostics.append(Diagnostic(code, severity, modules: modules, message: message, fix: fix, location: location))
        if fault, let id = modules.first, let index = position[id], nodes[index].fault == nil {
            nodes[index].fault = message
        }
    }

    /// Links each dependency to the module it names, recording what is missing or at the wrong version; returns the
    /// edges, module by module.
    private mutating func resolveDependencies() -> [PositionalEdge] {
        var edges: [PositionalEdge] = []
        // Every version read once, in order: a dependency's module is anywhere in the graph, and reading its version
        // through its node and catalog entry read two places all over memory instead of one.
        let versions = nodes.indices.map { self[manifestAt: $0].version }
        for index in nodes.indices {
            for number in self[manifestAt: index].dependencies.indices {
                let target =
                    metTarget(of: number, in: index, versions: versions)
                    ?? (self[manifestAt: index].dependencies[number].id.isValid
                        ? resolve(self[manifestAt: index].dependencies[number], of: index, number: number) : nil)
                if let target {
                    let optional = self[manifestAt: index].dependencies[number].isOptional
                    edges.append(PositionalEdge(index, to: target, optional: optional))
                }
            }
        }
        return edges
    }

    /// The position of the module that dependency number `number` of module `index` names, when it is installed at
    /// an accepted version (`versions`, by position): the common case, read in place rather than copied out of its
    /// list. Otherwise `nil`, and ``resolve(_:of:number:)`` reports what is wrong.
    private func metTarget(of number: Int, in index: Int, versions: [SemanticVersion]) -> Int? {
        guard self[manifestAt: index].dependencies[number].id.isValid,
            let target = position[self[manifestAt: index].dependencies[number].id],
            self[manifestAt: index].dependencies[number].versions.contains(versions[target])
        else { return nil }
        return target
    }

    /// The module that dependency number `number` of module `index` names, if any, reporting what is wrong with
    /// it. (The key path for a diagnostic is made only when one is reported: most dependencies are met.)
    private mutating func resolve(_ dependency: Dependency, of index: Int, number: Int) -> Int? {
        let id = nodes[index].id
        let kind = dependency.isOptional ? "can use" : "requires"
        guard let target = position[dependency.id] else {
            let nearMiss = ids.nearestMiss(of: dependency.id)
            let meant = nearMiss.map { " Did you mean \($0)?" } ?? ""
            func fix(_ addIt: String) -> String {
                guard let nearMiss else { return addIt.prefix(1).uppercased() + addIt.dropFirst() }
                return "If \(nearMiss) was meant, correct the dependency in \(id)'s manifest; otherwise \(addIt)"
            }
            if dependency.isOptional {
                report(
                    .missingOptionalDependency, .note, [id, dependency.id],
                    "\(id) can use \(dependency.id), which is not installed; it will run without it.\(meant)",
                    fix: fix("add \(dependency.id) to the catalog to enable what it offers, or ignore this note."),
                    keyPath: "dependencies[\(number)].id")
            } else {
                let message = "\(id) requires \(dependency.id), which is not installed.\(meant)"
                report(
                    .missingDependency, .error, [id, dependency.id], message,
                    fix: fix(
                        "add \(dependency.id) to the catalog, or declare the dependency optional in \(id)'s manifest."),
                    keyPath: "dependencies[\(number)].id")
                nodes[index].unmet.append((dependency.id, message))
            }
            return nil
        }
        let found = self[manifestAt: target].version
        if nodes[target].fault == nil, found.isValid, dependency.versions.problem == nil,
            !dependency.versions.contains(found)
        {
            let message = "\(id) \(kind) \(dependency.id) \(dependency.versions), but version \(found) is installed."
            let fix =
                "Install a version of \(dependency.id) in \(dependency.versions), or change \(id)'s "
                + "requirement to accept \(found)."
            if dependency.isOptional {
                report(
                    .dependencyVersionMismatch, .warning, [id, dependency.id], message + " It will run without it.",
                    fix: fix)
            } else {
                report(.dependencyVersionMismatch, .error, [id, dependency.id], message, fix: fix)
                nodes[index].unmet.append((dependency.id, message))
            }
            return nil
        }
        return target
    }
}

extension [ModuleID] {
    /// The identifier here that `id` most likely misspells (at most two edits away, and fewer than a quarter of its
    /// length), for "did you mean".
    package func nearestMiss(of id: ModuleID) -> ModuleID? {
        let length = id.rawValue.utf8.count
        let limit = Swift.min(2, (length - 1) / 4)
        guard limit > 0 else { return nil }
        var best: (id: ModuleID, distance: Int)?
        for candidate in self where candidate != id && abs(candidate.rawValue.utf8.count - length) <= limit {
            let distance = editDistance(id.rawValue, candidate.rawValue)
            if distance <= limit, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.id
    }
}
