import Mosaic
import MosaicKernel
import Testing

@Suite struct ValidationTests {
    private func validate(_ factories: ModuleFactory..., host: HostEnvironment = testHost) -> [Diagnostic] {
        ModuleGraph(catalog: catalog(factories), host: host).diagnostics
    }

    @Test("a sound graph has no diagnostics and an order that puts dependencies first")
    func soundGraph() {
        let graph = ModuleGraph(
            catalog: catalog(
                probe("com.app.dashboard", requires: [.module("com.app.weather")]),
                probe("com.app.weather", requires: [.module("com.app.location")]),
                probe("com.app.location")), host: testHost)
        #expect(graph.diagnostics.isEmpty)
        #expect(graph.activationOrder == ["com.app.location", "com.app.weather", "com.app.dashboard"])
        #expect(graph.levels == [["com.app.location"], ["com.app.weather"], ["com.app.dashboard"]])
    }

    @Test("three independent cycles are all reported, each with its full path")
    func threeCycles() {
        let diagnostics = validate(
            probe("com.a.one", requires: [.module("com.a.two")]),
            probe("com.a.two", requires: [.module("com.a.one")]),
            probe("com.b.one", requires: [.module("com.b.two")]),
            probe("com.b.two", requires: [.module("com.b.three")]),
            probe("com.b.three", requires: [.module("com.b.one")]),
            probe("com.c.self", requires: [.module("com.c.self")]),
            probe("com.d.fine"))
        let cycles = diagnostics.with(.dependencyCycle)
        #expect(cycles.count == 3)
        #expect(
            cycles.map(\.modules) == [
                ["com.a.one", "com.a.two"], ["com.b.one", "com.b.two", "com.b.three"], ["com.c.self"],
            ])
        #expect(cycles[1].message.hasPrefix("com.b.one → com.b.two → com.b.three → com.b.one"))
        #expect(cycles.allSatisfy { $0.severity == .error && $0.fix.contains("Remove one dependency") })
    }

    @Test("two cycles sharing modules are both listed")
    func overlappingCycles() {
        let diagnostics = validate(
            probe("com.x.a", requires: [.module("com.x.b")]),
            probe("com.x.b", requires: [.module("com.x.a"), .module("com.x.c")]),
            probe("com.x.c", requires: [.module("com.x.a")]))
        #expect(
            Set(diagnostics.with(.dependencyCycle).map(\.modules)) == [
                ["com.x.a", "com.x.b"], ["com.x.a", "com.x.b", "com.x.c"],
            ])
    }

    @Test("a tangle with too many cycles to list names a bounded number, still covering every module in it")
    func tangledGroup() {
        let ids = (0..<8).map { ModuleID("com.tangle.m\($0)") }
        let factories = ids.map { id in probe(id, requires: ids.filter { $0 != id }.map { .module($0) }) }
        let cycles = ModuleGraph(catalog: catalog(factories), host: testHost).diagnostics.with(.dependencyCycle)
        #expect(
            cycles.count >= ModuleGraph.maximumCyclesListed
                && cycles.count <= ModuleGraph.maximumCyclesListed + ids.count)
        #expect(Set(cycles.flatMap(\.modules)) == Set(ids))
        #expect(cycles[0].message.contains("8 modules are tangled here; more cycles exist than are listed."))
    }

    @Test("a version mismatch names the required range and the version found")
    func versionMismatch() {
        let diagnostics = validate(
            probe("com.app.dashboard", requires: [.module("com.app.weather", "1.0.0"..<"2.0.0")]),
            probe("com.app.weather", version: "2.1.0"))
        let mismatch = diagnostics.with(.dependencyVersionMismatch)
        #expect(mismatch.count == 1)
        #expect(
            mismatch.first?.message
                == "com.app.dashboard requires com.app.weather 1.0.0..<2.0.0, but version 2.1.0 is installed.")
        #expect(mismatch.first?.fix.contains("Install a version of com.app.weather in 1.0.0..<2.0.0") == true)
        #expect(mismatch.first?.modules == ["com.app.dashboard", "com.app.weather"])
    }

    @Test("one pass reports every kind of problem at once")
    func everythingAtOnce() {
        let diagnostics = validate(
            probe("Bad ID"),
            probe("com.app.versionless", version: "1.0"),
            probe("com.app.twin"), probe("com.app.twin"),
            probe("com.app.old-host", compatibility: Compatibility(host: "1.0.0"..<"2.0.0")),
            probe("com.app.mac-only", compatibility: Compatibility(platforms: [PlatformRequirement(.macOS)])),
            probe(
                "com.app.new-kernel",
                compatibility: Compatibility(platforms: [PlatformRequirement(.linux, minimum: "7.0.0")])),
            probe("com.app.camera", compatibility: Compatibility(features: ["camera", "location"])),
            probe("com.app.lonely", requires: [.module("com.app.missing")]),
            probe("com.app.hopeful", requires: [.module("com.app.maybe", optional: true)]))
        let codes = Set(diagnostics.map(\.code))
        #expect(
            codes == [
                .invalidIdentifier, .invalidVersion, .duplicateIdentifier, .incompatibleHostVersion,
                .incompatiblePlatform,
                .missingHostFeature, .missingDependency, .missingOptionalDependency,
            ])
        #expect(diagnostics.with(.incompatiblePlatform).count == 2)
        #expect(diagnostics.with(.missingHostFeature).first?.message.contains("'camera'") == true)
        #expect(diagnostics.with(.missingHostFeature).first?.message.contains("'location'") == false)
        #expect(
            diagnostics.with(.incompatibleHostVersion).first?.message
                == "com.app.old-host needs a host version in 1.0.0..<2.0.0, but this host is 2.3.0.")
        #expect(diagnostics.with(.missingOptionalDependency).first?.severity == .note)
    }

    @Test("validation runs no module code")
    func noSideEffects() {
        let log = EventLog()
        let graph = ModuleGraph(
            catalog: catalog(
                ModuleFactory(manifest: Manifest(id: "com.app.watched", version: "1.0.0")) {
                    log.record(.activationStarted("com.app.watched"))
                    return Probe()
                }), host: testHost)
        #expect(graph.activationOrder == ["com.app.watched"])
        #expect(log.all.isEmpty)
    }

    @Test("malformed declarations inside a manifest are reported")
    func malformedDeclarations() {
        let diagnostics = validate(
            probe(
                "com.app.odd",
                requires: [Dependency(id: "Not Valid"), .module("com.app.x", VersionRange(parsing: "2.0.0..<1.0.0")!)],
                entitlements: ["with space"]))
        #expect(diagnostics.with(.invalidDeclaration).count == 3)
    }

    @Test("Kernel.validate adds the authorization view: missing entitlements are warnings")
    func entitlementWarnings() {
        let diagnostics = Kernel.validate(
            catalog(probe("com.app.weather", entitlements: ["weather", "radar"])),
            host: testHost, entitlements: .granted(["weather"]))
        let missing = diagnostics.with(.missingEntitlement)
        #expect(missing.count == 1)
        #expect(missing.first?.severity == .warning)
        #expect(missing.first?.message.contains("'radar'") == true)
        #expect(missing.first?.message.contains("'weather'") == false)
    }
}
