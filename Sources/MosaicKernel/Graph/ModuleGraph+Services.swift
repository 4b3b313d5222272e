internal import Mosaic

/// The registration that provides a service after ranking, and who registered it (`nil`: the host).
struct ServiceProvider: Sendable {
    let module: Int?
    let registration: ServiceRegistration
}

extension ModuleGraph {
    /// Checks the service graph before any factory runs: one provider per service (ranks break ties), a provider
    /// for every service used, no cycles among factories, no singleton holding a shorter-lived service, and every
    /// standard requirement met. A module that uses another module's service comes to require that module, so the
    /// provider activates first and the consumer is blocked when the provider cannot run. Returns those edges,
    /// module by module.
    mutating func resolveServices(host: ServiceRegistrar, standard: (any Standard)?) -> [PositionalEdge] {
        chooseProviders(host: host)
        var edges: [PositionalEdge] = []
        for index in nodes.indices {
            checkStandard(of: index, standard)
            for key in nodes[index].registrar.services.used {
                guard let source = providingModule(of: key, usedBy: index) else { continue }
                edges.append(PositionalEdge(index, to: source, optional: false))
            }
        }
        checkFactories()
        return edges
    }

    /// Gives each service a position in ``services`` (in the order first registered, host first) and chooses its
    /// registration: one hash lookup per registration. Ranks are compared only for the rare service registered
    /// more than once.
    private mutating func chooseProviders(host: ServiceRegistrar) {
        var contested: [Int: [ServiceProvider]] = [:]
        func offer(_ candidate: consuming ServiceProvider) {
            let next = services.count
            var position = next
            func find(_ stored: inout Int) { position = stored }
            find(&servicePositions[candidate.registration.key, default: next])
            if position == next {
                services.append(candidate)  // moved, not copied: a copy retains each part of the registration
            } else {
                contested[position, default: [services[position]]].append(candidate)
            }
        }
        let offered = nodes.reduce(host.provided.count) { $0 + $1.registrar.services.provided.count }
        services.reserveCapacity(offered)
        servicePositions.reserveCapacity(offered)
        for registration in host.provided { offer(ServiceProvider(module: nil, registration: registration)) }
        for index in nodes.indices {
            for registration in nodes[index].registrar.services.provided {
                offer(ServiceProvider(module: index, registration: registration))
            }
        }
        for (position, providers) in contested.sorted(by: { $0.key < $1.key }) {
            guard let top = providers.map(\.registration.rank).max() else { continue }
            let key = services[position].registration.key
            let winners = providers.filter { $0.registration.rank == top }
            services[position] = winners[0]
            for extra in winners.dropFirst() {
                let names = winners.map { providerName($0.module) }.joined(separator: " and ")
                report(
                    .duplicateServiceProvider, .error, extra.module.map { [nodes[$0].id] } ?? [],
                    "\(names) both provide \(key) at rank \(top); only \(providerName(winners[0].module))'s is used.",
                    fix: "Remove one registration, or rank one .fallback (a default) or .override (a replacement).",
                    fault: true)
            }
        }
    }

    /// The registration chosen for `key`, if anything provides it.
    func serviceProvider(of key: AnyServiceKey) -> ServiceProvider? {
        servicePositions[key].map { services[$0] }
    }

    private func providerName(_ module: Int?) -> String {
        module.map { nodes[$0].id.rawValue } ?? "the host"
    }

    /// The module that provides `key` for module `index` to require (`nil` for the host, or the module itself), or
    /// `nil` after reporting that nothing does.
    private mutating func providingModule(of key: AnyServiceKey, usedBy index: Int) -> Int? {
        let id = nodes[index].id
        guard let provider = serviceProvider(of: key) else {
            report(
                .missingServiceProvider, .error, [id], "\(id) uses \(key), which no module and not the host provides.",
                fix: "Add the module that provides \(key), register it in the host, or remove the use from \(id).",
                fault: true)
            return nil
        }
        return provider.module == index ? nil : provider.module
    }

    private mutating func checkStandard(of index: Int, _ standard: (any Standard)?) {
        let id = nodes[index].id
        for requirement in nodes[index].registrar.standardRequirements {
            guard let standard else {
                report(
                    .standardMismatch, .error, [id],
                    "\(id) requires a standard conforming to \(requirement.name), "
                        + "but the host has no standard.",
                    fix: "Give the kernel a standard that conforms to \(requirement.name).", fault: true)
                continue
            }
            if !requirement.isMet(standard) {
                report(
                    .standardMismatch, .error, [id],
                    "\(id) requires the standard to conform to \(requirement.name); \(qualifiedTypeName(type(of: standard))) does not.",
                    fix:
                        "Make \(qualifiedTypeName(type(of: standard))) conform to \(requirement.name), or remove \(id).",
                    fault: true)
            }
        }
    }

    /// Cycles among factories, and singletons that would capture a transient or cached service. Services are
    /// walked by position; a service whose factory takes nothing is never visited.
    private mutating func checkFactories() {
        // Read in place: copying a provider out of the array retains each part of its registration.
        let dependencies = services.withUnsafeBufferPointer { providers in
            providers.indices.map { position -> [Int] in
                let needs = providers[position].registration.dependencies
                return needs.isEmpty ? [] : needs.compactMap { servicePositions[$0] }
            }
        }
        var state = [UInt8](repeating: 0, count: services.count)  // 0: not seen; 1: on the current path; 2: done.
        var reported: Set<Set<Int>> = []
        func visit(_ service: Int, path: [Int]) {
            if state[service] == 2 { return }
            if state[service] == 1 {
                let cycle = Array(path.drop { $0 != service })
                guard reported.insert(Set(cycle)).inserted else { return }
                let trail = (cycle + [service]).map {
                    "\(services[$0].registration.key) (\(providerName(services[$0].module)))"
                }
                let modules = cycle.compactMap { services[$0].module.map { nodes[$0].id } }
                report(
                    .serviceCycle, .error, modules,
                    "\(trail.joined(separator: " → ")): these factories need each other, so none can be built.",
                    fix: "Break the cycle: have one service take a factory or look the other up when used.")
                for module in modules { faultIfSound(module, "its services depend on each other in a cycle.") }
                return
            }
            state[service] = 1
            for dependency in dependencies[service] { visit(dependency, path: path + [service]) }
            state[service] = 2
        }
        for service in services.indices where !dependencies[service].isEmpty { visit(service, path: []) }
        for position in services.indices where !dependencies[position].isEmpty {
            guard services[position].registration.scope == .singleton else { continue }
            let provider = services[position]
            let key = provider.registration.key
            for inner in dependencies[position] where services[inner].registration.scope != .singleton {
                let (dependency, scope) = (services[inner].registration.key, services[inner].registration.scope)
                let owner = providerName(provider.module)
                report(
                    .captiveService, .error, provider.module.map { [nodes[$0].id] } ?? [],
                    "the singleton \(key) in \(owner) depends on \(dependency), which is \(scope): "
                        + "the singleton would keep its first \(dependency) for ever.",
                    fix: "Make \(key) \(scope), or \(dependency) a singleton.", fault: true)
            }
        }
    }

    private mutating func faultIfSound(_ id: ModuleID, _ reason: String) {
        if let index = position[id], nodes[index].fault == nil { nodes[index].fault = reason }
    }
}
