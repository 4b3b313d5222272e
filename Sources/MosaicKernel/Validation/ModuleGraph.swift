public import Mosaic

/// The validated module graph: every module of a catalog, checked as a whole against a host, with the order in
/// which they can activate.
///
/// Building it runs no module code and has no side effects, so it is what a unit test or a command-line check calls
/// to learn everything wrong with a set of modules at once:
///
/// ```swift
/// let graph = ModuleGraph(catalog: ModuleCatalog(modules: AppManifest.all), host: host)
/// #expect(graph.diagnostics.filter(atLeast: .error).isEmpty)
/// ```
public struct ModuleGraph: Sendable {
    /// One module of the graph, with what validation decided about it.
    struct Node: Sendable {
        let entry: ModuleCatalog.Entry
        var manifest: Manifest { entry.manifest }
        /// Why the module itself can never run here, or `nil`.
        var fault: String?
        /// Whether the module is in a dependency cycle.
        var inCycle = false
        /// Required dependencies that are missing or at the wrong version, with the reason.
        var unmet: [(id: ModuleID, reason: String)] = []
        /// Required dependencies that are present at an accepted version.
        var required: [ModuleID] = []
        /// Optional dependencies that are present at an accepted version.
        var optional: [ModuleID] = []
        /// Modules that depend on this one (required or optional).
        var dependents: [ModuleID] = []

        /// Every dependency that orders activation.
        var dependencies: [ModuleID] { required + optional }
    }

    /// The host the graph was checked against.
    public let host: HostEnvironment
    /// Every problem found, in a stable order: discovery problems first, then module by module.
    public internal(set) var diagnostics: [Diagnostic]
    /// The modules by identifier (the first entry of an identifier claimed twice).
    var nodes: [ModuleID: Node] = [:]
    /// The identifiers in catalog order.
    var ids: [ModuleID] = []
    /// Every module not in a dependency cycle, each after all of its dependencies; ties keep catalog order.
    public internal(set) var activationOrder: [ModuleID] = []
    /// ``activationOrder`` cut into levels: a module's level is one more than its deepest dependency's, so the
    /// modules of one level do not depend on each other and may activate together.
    public internal(set) var levels: [[ModuleID]] = []

    /// Validates `catalog` against `host`, collecting every problem.
    public init(catalog: ModuleCatalog, host: HostEnvironment) {
        self.host = host
        self.diagnostics = catalog.diagnostics
        collectNodes(catalog.entries)
        for id in ids { checkModule(id) }
        resolveDependencies()
        findCycles()
        plan()
    }

    /// The module with identifier `id`, if the graph has it.
    func node(_ id: ModuleID) -> Node? { nodes[id] }

    /// Groups entries by identifier; a second, different module under one identifier faults the identifier.
    private mutating func collectNodes(_ entries: [ModuleCatalog.Entry]) {
        var claimants: [ModuleID: [ModuleCatalog.Entry]] = [:]
        for entry in entries {
            let id = entry.manifest.id
            if nodes[id] == nil {
                nodes[id] = Node(entry: entry)
                ids.append(id)
            }
            claimants[id, default: []].append(entry)
        }
        for id in ids {
            guard let entries = claimants[id], entries.count > 1 else { continue }
            let sources = entries.map { "\($0.factory.name) (\($0.origin))" }.joined(separator: " and ")
            report(
                .duplicateIdentifier, .error, [id],
                "\(entries.count) different modules claim the identifier \(id): \(sources).",
                fix: "Give each module its own identifier, or list only one of them.", fault: true)
        }
    }

    /// Records a diagnostic; when `fault` is set, the first module named can never run here.
    mutating func report(
        _ code: Diagnostic.Code, _ severity: Diagnostic.Severity, _ modules: [ModuleID], _ message: String,
        fix: String, fault: Bool = false
    ) {
        diagnostics.append(Diagnostic(code, severity, modules: modules, message: message, fix: fix))
        if fault, let id = modules.first, nodes[id]?.fault == nil {
            nodes[id]?.fault = message
        }
    }

    /// Links each dependency to the module it names, recording what is missing or at the wrong version.
    private mutating func resolveDependencies() {
        for id in ids {
            guard let node = nodes[id] else { continue }
            for dependency in node.manifest.dependencies where dependency.id.isValid {
                resolve(dependency, of: id)
            }
        }
    }

    private mutating func resolve(_ dependency: Dependency, of id: ModuleID) {
        let kind = dependency.isOptional ? "can use" : "requires"
        guard let target = nodes[dependency.id] else {
            if dependency.isOptional {
                report(
                    .missingOptionalDependency, .note, [id, dependency.id],
                    "\(id) can use \(dependency.id), which is not installed; it will run without it.",
                    fix: "Add \(dependency.id) to the catalog to enable what it offers, or ignore this note.")
            } else {
                let message = "\(id) requires \(dependency.id), which is not installed."
                report(
                    .missingDependency, .error, [id, dependency.id], message,
                    fix: "Add \(dependency.id) to the catalog, or declare the dependency optional.")
                nodes[id]?.unmet.append((dependency.id, message))
            }
            return
        }
        let found = target.manifest.version
        if target.fault == nil, found.isValid, dependency.versions.problem == nil,
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
                nodes[id]?.unmet.append((dependency.id, message))
            }
            return
        }
        guard let node = nodes[id], !node.required.contains(dependency.id) else { return }
        if dependency.isOptional {
            if !node.optional.contains(dependency.id) { nodes[id]?.optional.append(dependency.id) }
        } else {
            nodes[id]?.required.append(dependency.id)
            nodes[id]?.optional.removeAll { $0 == dependency.id }
        }
        if !(nodes[dependency.id]?.dependents.last == id) { nodes[dependency.id]?.dependents.append(id) }
    }
}
