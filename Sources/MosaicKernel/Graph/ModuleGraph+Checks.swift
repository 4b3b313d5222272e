internal import Mosaic

extension ModuleGraph {
    /// Checks what a module declares about itself: identifier, version, entitlement names, dependency
    /// declarations, and compatibility with the host. Every problem found is reported.
    ///
    /// The manifest is read in place, field by field: a copy of it retained a dozen references per module.
    mutating func checkModule(_ index: Int) {
        let id = nodes[index].id
        for crossing in nodes[index].registrar.crossingProblems {
            report(
                .cannotCross, .error, [id], "\(id) runs in a process of its own, but it \(crossing.problem).",
                fix: crossing.fix + " (A host isolates it with KernelOptions.isolation.modules; its manifest with "
                    + "isolation: .process.)", fault: true, keyPath: "isolation")
        }
        if !id.isValid {
            let problems = id.problems
            report(
                .invalidIdentifier, .error, [id],
                "the identifier \(id.rawValue.quotedForMessage()) is invalid: \(problems.joined(separator: "; ")).",
                fix: "Rename the module to a reverse-DNS identifier such as 'com.example.feature'.", fault: true,
                keyPath: "id")
        }
        if let problem = self[manifestAt: index].version.problem {
            report(
                .invalidVersion, .error, [id], "the version of \(id) is invalid: \(problem).",
                fix: "Set the manifest's version to a semantic version.", fault: true, keyPath: "version")
        }
        if self[manifestAt: index].entitlements.contains(where: { $0.problem != nil }) {
            for entitlement in self[manifestAt: index].entitlements.sorted() {
                if let problem = entitlement.problem {
                    report(
                        .invalidDeclaration, .error, [id], "\(id) declares an unusable entitlement: \(problem).",
                        fix: "Rename the entitlement in \(id)'s manifest.", fault: true, keyPath: "entitlements")
                }
            }
        }
        // Each dependency is copied out only when something is wrong with it.
        for number in self[manifestAt: index].dependencies.indices
        where !self[manifestAt: index].dependencies[number].id.isValid
            || self[manifestAt: index].dependencies[number].versions.problem != nil
        {
            checkDeclaration(of: self[manifestAt: index].dependencies[number], in: id, number: number)
        }
        checkCompatibility(of: id, at: index)
    }

    /// Checks dependency number `number` of `id`. (Its key path is made only for a diagnostic, as in `resolve`.)
    private mutating func checkDeclaration(of dependency: Dependency, in id: ModuleID, number: Int) {
        let keyPath = { "dependencies[\(number)]" }
        if !dependency.id.isValid {
            let problems = dependency.id.problems
            report(
                .invalidDeclaration, .error, [id],
                "\(id) depends on \(dependency.id.rawValue.quotedForMessage()), which is not a valid identifier: "
                    + "\(problems.joined(separator: "; ")).",
                fix: "Correct the dependency's identifier in \(id)'s manifest.", fault: true,
                keyPath: keyPath() + ".id")
        }
        if let problem = dependency.versions.problem {
            report(
                .invalidDeclaration, .error, [id, dependency.id],
                "\(id)'s dependency on \(dependency.id) has a bad version \(problem).",
                fix: "Write the range as \(VersionRange.acceptedForms).", fault: true, keyPath: keyPath() + ".versions")
        }
    }

    private mutating func checkCompatibility(of id: ModuleID, at index: Int) {
        if let problem = self[manifestAt: index].compatibility.host.problem {
            report(
                .invalidDeclaration, .error, [id], "\(id)'s host compatibility has a bad version \(problem).",
                fix: "Write the range as \(VersionRange.acceptedForms).", fault: true, keyPath: "compatibility.host")
        } else if !self[manifestAt: index].compatibility.host.contains(host.version) {
            let compatibility = self[manifestAt: index].compatibility
            report(
                .incompatibleHostVersion, .error, [id],
                "\(id) needs a host version in \(compatibility.host), but this host is \(host.version).",
                fix: "Run \(id) in a host whose version is in \(compatibility.host), or widen its compatibility.",
                fault: true, keyPath: "compatibility.host")
        }
        if !self[manifestAt: index].compatibility.platforms.isEmpty {
            checkPlatforms(of: id, self[manifestAt: index].compatibility.platforms)
        }
        guard !self[manifestAt: index].compatibility.features.isSubset(of: host.features) else { return }
        let missing = self[manifestAt: index].compatibility.features.subtracting(host.features).sorted()
        if !missing.isEmpty {
            let list = missing.map { $0.quotedForMessage() }.joined(separator: ", ")
            report(
                .missingHostFeature, .error, [id],
                "\(id) needs the host feature\(missing.count == 1 ? "" : "s") \(list), which this host does not offer.",
                fix: "Run \(id) in a host that offers \(list), or remove the requirement from its compatibility.",
                fault: true, keyPath: "compatibility.features")
        }
    }

    private mutating func checkPlatforms(of id: ModuleID, _ platforms: [PlatformRequirement]) {
        for (position, requirement) in platforms.enumerated() {
            for (key, bound) in [("min", requirement.minimum), ("max", requirement.maximum)] {
                guard let problem = bound?.problem else { continue }
                report(
                    .invalidDeclaration, .error, [id], "\(id)'s platform requirement has a bad version: \(problem).",
                    fix: "Write platform versions as MAJOR.MINOR.PATCH.", fault: true,
                    keyPath: "compatibility.platforms[\(position)].\(key)")
            }
        }
        guard !platforms.isEmpty else { return }
        let supported = platforms.map(\.description).joined(separator: ", ")
        let here = platforms.filter { $0.platform == host.platform }
        if here.isEmpty {
            report(
                .incompatiblePlatform, .error, [id],
                "\(id) supports \(supported), but this host runs on \(host.platform).",
                fix: "Run \(id) on a supported platform, or add \(host.platform) to its compatibility.", fault: true,
                keyPath: "compatibility.platforms")
        } else if !here.contains(where: { $0.accepts(host.platformVersion) }) {
            report(
                .incompatiblePlatform, .error, [id],
                "\(id) supports \(supported), but this host runs \(host.platform) \(host.platformVersion).",
                fix: "Run \(id) on a supported \(host.platform) version, or widen its platform range.", fault: true,
                keyPath: "compatibility.platforms")
        }
    }
}
