internal import Mosaic
public import MosaicKernel

extension TestHarness {
    /// What a start builds from the harness: the catalog with stand-ins and faults, the host, the grant.
    struct Setup {
        var catalog = ModuleCatalog()
        var standIns: [ModuleID] = []
        /// Problems of the test's own making, such as a stand-in for a misspelt id.
        var diagnostics: [Diagnostic] = []
        let host: HostEnvironment
        let entitlements: Set<Entitlement>
        let extensionPoints: [AnyExtensionPoint]

        init(_ harness: TestHarness) {
            let manifests = harness.modules.map(\.manifest)
            for factory in harness.modules {
                catalog.add(harness.faults[factory.manifest.id].map { factory.injecting($0) } ?? factory)
            }
            let loadedIDs = manifests.map(\.id)
            for manifest in manifests {
                for dependency in manifest.dependencies where !dependency.isOptional {
                    let loaded = loadedIDs.contains(dependency.id) || standIns.contains(dependency.id)
                    guard !loaded else { continue }
                    standIns.append(dependency.id)
                    catalog.add(Self.standIn(for: dependency))
                    if let meant = loadedIDs.nearestMiss(of: dependency.id) {
                        diagnostics.append(Self.nearMiss(dependency.id, of: meant, in: manifest.id))
                    }
                }
            }
            host = harness.host ?? Self.host(accepting: manifests)
            extensionPoints = harness.extensionPoints ?? catalog.contributedPoints
            entitlements = (harness.entitlements ?? catalog.declaredEntitlements).subtracting(harness.withheld)
        }

        /// A stand-in would hide a typo: `id` is not loaded, but `meant`, one or two letters away, is.
        static func nearMiss(_ id: ModuleID, of meant: ModuleID, in dependent: ModuleID) -> Diagnostic {
            Diagnostic(
                .standInNearMiss, .error, modules: [dependent, id],
                message: "\(dependent) requires \(id), which is not loaded, so the harness would stand in for it; "
                    + "did you mean \(meant), which is loaded?",
                fix: "If \(meant) was meant, correct the dependency in \(dependent)'s manifest; if \(id) is another "
                    + "module, load it in the harness too.")
        }

        /// An empty module that satisfies `dependency`: its id, at the lowest version the range allows.
        static func standIn(for dependency: Dependency) -> ModuleFactory {
            let manifest = Manifest(id: dependency.id, version: dependency.versions.lowerBound ?? "1.0.0")
            return ModuleFactory(manifest: manifest) { StandInModule() }
        }

        /// The least host every module in `manifests` accepts: the highest of their lowest versions, the
        /// platform this runs on at the highest minimum they set for it, and every feature any of them needs.
        static func host(accepting manifests: [Manifest]) -> HostEnvironment {
            let compatibility = manifests.map(\.compatibility)
            let platforms = compatibility.flatMap(\.platforms).filter { $0.platform == .current }
            return HostEnvironment(
                version: compatibility.compactMap(\.host.lowerBound).max() ?? "1.0.0",
                platformVersion: platforms.compactMap(\.minimum).max() ?? "0.0.0",
                features: compatibility.reduce(into: []) { $0.formUnion($1.features) })
        }
    }
}

/// What stands in for a required module the test does not load: it provides nothing.
struct StandInModule: Module {
    static let manifest = Manifest(id: "mosaic.testing.stand-in", version: "1.0.0")
}

extension Diagnostic.Code {
    /// The harness would stand in for a module whose id is a near miss of a loaded module's: likely a typo.
    public static let standInNearMiss: Diagnostic.Code = "testing.stand-in-near-miss"
}
