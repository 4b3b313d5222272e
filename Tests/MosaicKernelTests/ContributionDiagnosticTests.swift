import Mosaic
import MosaicKernel
import Testing

extension ExtensionPoint where Content == Int {
    /// A host's own point that takes exactly one number.
    static var answer: Self { ExtensionPoint(id: "com.app.answer", cardinality: .exactlyOne) }
}

extension ExtensionPoint where Content == String {
    /// A point the test host never declares.
    static var undeclared: Self { ExtensionPoint(id: "mosaic.dashbord") }
    /// The dashboard's identifier with the wrong content type.
    static var fakeDashboard: Self { ExtensionPoint(id: "mosaic.dashboard") }
}

@Suite struct ContributionDiagnosticTests {
    func diagnostics(_ factories: [ModuleFactory], points: [AnyExtensionPoint] = []) -> [Diagnostic] {
        Kernel.validate(catalog(factories), host: testHost, extensionPoints: points)
    }

    @Test("two modules claiming the one main view: an error, and the second in order cannot run")
    func mainViewClaimedTwice() async throws {
        let factories = [
            contributor("com.app.weather", to: .mainView, [("weather.main", 10)]),
            contributor("com.app.sports", to: .mainView, [("sports.main", 20)]),
        ]
        let found = diagnostics(factories).filter { $0.code == .cardinalityViolated }
        #expect(found.count == 1)
        #expect(found.first?.modules == ["com.app.weather", "com.app.sports"])
        #expect(found.first?.message.contains("which takes at most one") == true)
        let kernel = makeKernel(factories)
        let report = try await kernel.boot()
        #expect(report["com.app.sports"]?.state.isActive == true)
        #expect(report["com.app.weather"]?.state.name == "failed")
        #expect(kernel.contributions(for: .mainView).map(\.module) == ["com.app.sports"])
    }

    @Test("a point that takes exactly one, with none: an error naming the point")
    func exactlyOneMissing() {
        let found = diagnostics([], points: [ExtensionPoint.answer.erased]).filter { $0.code == .cardinalityViolated }
        #expect(
            found.map(\.message) == ["com.app.answer takes exactly one contribution, but no module contributes to it."])
    }

    @Test("a contribution to an undeclared point is a warning naming the closest point; the module still runs")
    func unknownPoint() async throws {
        let factory = serviceModule("com.app.weather") { module in
            module.contribute(to: .undeclared, id: "w", title: "W") { "text" }
        }
        let found = diagnostics([factory]).filter { $0.code == .unknownExtensionPoint }
        #expect(found.map(\.severity) == [.warning])
        #expect(found.first?.fix.contains("or contribute to mosaic.dashboard if that was meant") == true)
        #expect(try await makeKernel([factory]).boot()["com.app.weather"]?.state.isActive == true)
    }

    @Test("content of the wrong type for a point is an error naming both types")
    func wrongContentType() {
        let factory = serviceModule("com.app.weather") { module in
            module.contribute(to: .fakeDashboard, id: "w", title: "W") { "text" }
        }
        let found = diagnostics([factory]).filter { $0.code == .contentTypeMismatch }
        #expect(
            found.map(\.message) == [
                "com.app.weather contributes String to mosaic.dashboard, which takes Mosaic.Panel."
            ])
    }

    @Test("two contributions with one identifier in a point are an error, across modules and within one")
    func duplicateIdentifiers() {
        let found = diagnostics([
            contributor("com.app.weather", [("widget", 1)]),
            contributor("com.app.sports", [("widget", 2), ("table", 1), ("table", 0)]),
        ]).filter { $0.code == .duplicateContribution }
        #expect(
            found.map(\.message) == [
                "com.app.weather and com.app.sports both contribute \"widget\" to mosaic.dashboard-widgets.",
                "com.app.sports contributes \"table\" to mosaic.dashboard-widgets twice.",
            ])
    }

    @Test("a host point is declared with the kernel and filled like the standard ones")
    func hostPoint() async throws {
        let kernel = Kernel(
            catalog: catalog(serviceModule("com.app.deep") { $0.contribute(to: .answer, id: "a", title: "A") { 42 } }),
            host: testHost, extensionPoints: [ExtensionPoint.answer.erased], logger: quietLogger)
        try await kernel.boot()
        #expect(try await kernel.contributions(for: .answer).first?.content() == 42)
        #expect(await kernel.diagnostics.isEmpty)
    }

    @Test("a page naming a tab no module declares is a boot diagnostic naming the tabs that exist")
    func typoedTab() async throws {
        let factories = [
            serviceModule("com.app.weather") { module in
                module.tab("weather")
                module.tab("radar")
                module.contribute(to: .dashboard, id: "weather.cities", tab: "wether") { Panel(.text("cities")) }
            }
        ]
        let found = diagnostics(factories).filter { $0.code == .unknownTab }
        #expect(found.count == 1)
        #expect(found.first?.severity == .error)
        #expect(found.first?.modules == ["com.app.weather"])
        #expect(found.first?.message.contains(#"the tab "wether", which no module declares"#) == true)
        #expect(found.first?.message.contains(#"the tabs are: "radar", "weather""#) == true)
        let kernel = makeKernel(factories)
        let report = try await kernel.boot()
        #expect(report.diagnostics.contains { $0.code == .unknownTab })
        #expect(kernel.contributions(for: .dashboard).isEmpty, "the page is not shown under no tab")
        await kernel.shutdown()
    }

    @Test("a malformed or reversed version range written in code is a diagnostic, not a trap")
    func badVersionLiteral() {
        let factories = [
            ModuleFactory(
                manifest: Manifest(
                    id: "com.app.weather", version: "1.0.0",
                    requires: [.module("com.app.location", "1.0.0"..<"2.0"), .module("com.app.art", "3.0.0"..."2.0.0")])
            ) { Probe() },
            ModuleFactory(manifest: Manifest(id: "com.app.location", version: "1.0.0")) { Probe() },
            ModuleFactory(manifest: Manifest(id: "com.app.art", version: "1.0.0")) { Probe() },
        ]
        let messages = diagnostics(factories).map(\.message).joined(separator: "\n")
        #expect(messages.contains("'1.0.0..<2.0'"), "\(messages)")
        #expect(messages.contains("is empty"), "\(messages)")
    }
}
