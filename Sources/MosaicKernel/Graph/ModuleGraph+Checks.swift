internal import Mosaic

extension ModuleGraph {
    /// Checks what a module declares about itself: identifier, version, entitlement names, dependency
    /// declarations, and compatibility with the host. Every problem found is reported.
    mutating func checkModule(_ index: Int) {
        let manifest = self[manifestAt: index]
        let id = manifest.id
        let problems = id.problems
        if !problems.isEmpty {
            report(
                .invalidIdentifier, .error, [id],
                "the identifier \(id.rawValue.quotedForMessage()) is invalid: \(problems.joined(separator: "; ")).",
                fix: "Rename the module to a reverse-DNS identifier such as 'com.example.feature'.", fault: true,
                keyPath: "id")
        }
        if let problem = manifest.version.problem {
            report(
                .invalidVersion, .error, [id], "the version of \(id) is invalid: \(problem).",
                fix: "Set the manifest's version to a semantic version.", fault: true, keyPath: "version")
        }
        for entitlement in manifest.entitlements.sorted() {
            if let problem = entitlement.problem {
                report(
                    .invalidDeclaration, .error, [id], "\(id) declares an unusable entitlement: \(problem).",
                    fix: "Rename the entitlement in \(id)'s manifest.", fault: true, keyPath: "entitlements")
            }
        }
        // Each dependency is read in place, and copied out only when something is wrong with it.
        for number in manifest.dependencies.indices
        where !manifest.dependencies[number].id.isValid || manifest.dependencies[number].versions.problem != nil {
            checkDeclaration(of: manifest.dependencies[number], in: id, number: number)
        }
        checkCompatibility(of: id, manifest.compatibility)
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

    private mutating func checkCompatibility(of id: ModuleID, _ compatibility: Compatibility) {
        if let problem = compatibility.host.problem {
            report(
                .invalidDeclaration, .error, [id], "\(id)'s host compatibility has a bad version \(problem).",
                fix: "Write the range as \(VersionRange.acceptedForms).", fault: true, keyPath: "compatibility.host")
        } else if !compatibility.host.contains(host.version) {
            report(
                .incompatibleHostVersion, .error, [id],
                "\(id) needs a host version in \(compatibility.host), but this host is \(host.version).",
                fix: "Run \(id) in a host whose version is in \(compatibility.host), or widen its compatibility.",
                fault: true, keyPath: "compatibility.host")
        }
        checkPlatforms(of: id, compatibility.platforms)
        let missing = compatibility.features.subtracting(host.features).sorted()
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
