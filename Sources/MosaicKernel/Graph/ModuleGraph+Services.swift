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
    /// provider activates first and the consumer is blocked when the provider cannot run.
    mutating func resolveServices(host: ServiceRegistrar, standard: (any Standard)?) {
        chooseProviders(host: host)
        for index in nodes.indices {
            checkStandard(of: index, standard)
            for key in nodes[index].registrar.services.used { link(index, to: key) }
        }
        checkFactories()
    }

    private mutating func chooseProviders(host: ServiceRegistrar) {
        var candidates: [AnyServiceKey: [ServiceProvider]] = [:]
        var order: [AnyServiceKey] = []
        let all =
            host.provided.map { ServiceProvider(module: nil, registration: $0) }
            + nodes.indices.flatMap { index in
                nodes[index].registrar.services.provided.map { ServiceProvider(module: index, registration: $0) }
            }
        for provider in all {
            let key = provider.registration.key
            if candidates[key] == nil { order.append(key) }
            candidates[key, default: []].append(provider)
        }
        serviceOrder = order
        for key in order {
            guard let providers = candidates[key], let top = providers.map(\.registration.rank).max() else { continue }
            let winners = providers.filter { $0.registration.rank == top }
            serviceProviders[key] = winners[0]
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

    private func providerName(_ module: Int?) -> String {
        module.map { nodes[$0].id.rawValue } ?? "the host"
    }

    /// Makes module `index` require the module that provides `key`, or reports that nothing does.
    private mutating func link(_ index: Int, to key: AnyServiceKey) {
        let id = nodes[index].id
        guard let provider = serviceProviders[key] else {
            report(
                .missingServiceProvider, .error, [id], "\(id) uses \(key), which no module and not the host provides.",
                fix: "Add the module that provides \(key), register it in the host, or remove the use from \(id).",
                fault: true)
            return
        }
        guard let source = provider.module, source != index, !nodes[index].required.contains(source) else { return }
        nodes[index].required.append(source)
        nodes[index].optional.removeAll { $0 == source }
        if !nodes[source].dependents.contains(index) { nodes[source].dependents.append(index) }
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

    /// Cycles among factories, and singletons that would capture a transient or cached service.
    private mutating func checkFactories() {
        var state: [AnyServiceKey: Bool] = [:]  // false: on the current path; true: done.
        var reported: Set<Set<AnyServiceKey>> = []
        func visit(_ key: AnyServiceKey, path: [AnyServiceKey]) {
            if state[key] == true { return }
            if state[key] == false {
                let cycle = Array(path.drop { $0 != key })
                guard reported.insert(Set(cycle)).inserted else { return }
                let trail = (cycle + [key]).map { "\($0) (\(providerName(serviceProviders[$0]?.module)))" }
                let modules = cycle.compactMap { serviceProviders[$0]?.module.map { nodes[$0].id } }
                report(
                    .serviceCycle, .error, modules,
                    "\(trail.joined(separator: " → ")): these factories need each other, so none can be built.",
                    fix: "Break the cycle: have one service take a factory or look the other up when used.")
                for module in modules { faultIfSound(module, "its services depend on each other in a cycle.") }
                return
            }
            state[key] = false
            for dependency in serviceProviders[key]?.registration.dependencies ?? [] {
                visit(dependency, path: path + [key])
            }
            state[key] = true
        }
        for key in serviceOrder { visit(key, path: []) }
        for key in serviceOrder {
            guard let provider = serviceProviders[key], provider.registration.scope == .singleton else { continue }
            for dependency in provider.registration.dependencies {
                guard let inner = serviceProviders[dependency], inner.registration.scope != .singleton else { continue }
                let owner = providerName(provider.module)
                report(
                    .captiveService, .error, provider.module.map { [nodes[$0].id] } ?? [],
                    "the singleton \(key) in \(owner) depends on \(dependency), which is \(inner.registration.scope): "
                        + "the singleton would keep its first \(dependency) for ever.",
                    fix: "Make \(key) \(inner.registration.scope), or \(dependency) a singleton.", fault: true)
            }
        }
    }

    private mutating func faultIfSound(_ id: ModuleID, _ reason: String) {
        if let index = position[id], nodes[index].fault == nil { nodes[index].fault = reason }
    }
}
