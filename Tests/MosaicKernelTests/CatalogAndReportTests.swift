import Foundation
import GhostApp
import InMemoryLogging
import Logging
import Mosaic
import MosaicKernel
import Testing

private struct Alpha: Module {
    static let manifest = Manifest(id: "com.test.alpha", version: "1.0.0")
}

private struct Beta: Module {
    static let manifest = Manifest(id: "com.test.beta", version: "1.0.0", requires: [.module("com.test.alpha")])
}

private struct AlphaImpostor: Module {
    static let manifest = Manifest(id: "com.test.alpha", version: "9.0.0")
}

private enum Core: ModuleGroup {
    static let modules: [any Module.Type] = [Alpha.self]
}

private enum Features: ModuleGroup {
    static let modules: [any Module.Type] = [Beta.self, Alpha.self]
}

@Suite struct CatalogTests {
    @Test("groups are aggregated in order and a module listed twice is kept once")
    func groups() {
        let catalog = ModuleCatalog(groups: [Core.self, Features.self])
        #expect(catalog.entries.map(\.manifest.id) == ["com.test.alpha", "com.test.beta"])
    }

    @Test("a module type uninstalled is listed again when installed again, not skipped as already present")
    func reinstalledType() async throws {
        let catalog = ModuleCatalog(modules: [Alpha.self, Beta.self])
        let kernel = Kernel(catalog: catalog, host: testHost, logger: quietLogger)
        try await kernel.boot()
        try await kernel.uninstall("com.test.beta")
        #expect(try await kernel.install(Beta.self) == .active)
        #expect(await kernel.report()["com.test.beta"]?.state.name == "active")
        await kernel.shutdown()
    }

    @Test("a catalog keeps each manifest as written when its identifiers' texts are made apart from equal ones")
    func manifestsAsWritten() async throws {
        // Identifiers longer than 15 bytes, each made anew: their texts are stored apart until the catalog shares them.
        func id(_ name: String) -> ModuleID { ModuleID("com.example.\(name).module") }
        let manifests = [
            Manifest(id: id("core"), version: "2.1.0"),
            Manifest(
                id: id("feed"), version: "1.0.0",
                requires: [.module(id("core"), from: "2.0.0"), .module(id("maps"), optional: true)]),
            Manifest(
                id: id("home"), version: "1.4.2",
                requires: [
                    .module(id("feed"), "1.0.0"..<"2.0.0"), .module(id("core"), from: "2.1.0"), .module(id("feed")),
                ]),
        ]
        var catalog = ModuleCatalog()
        for manifest in manifests { catalog.add(ModuleFactory(manifest: manifest) { Probe() }) }
        #expect(catalog.entries.map(\.manifest) == manifests)
        let kernel = Kernel(catalog: catalog, host: testHost, logger: quietLogger)
        let report = try await kernel.boot()
        #expect(report.modules.map { "\($0.id) \($0.state.name)" } == manifests.map { "\($0.id) active" })
        await kernel.shutdown()
    }

    @Test("two different modules with one identifier are both kept, so validation reports the clash")
    func impostor() async throws {
        let catalog = ModuleCatalog(modules: [Alpha.self, Beta.self, AlphaImpostor.self])
        #expect(catalog.entries.count == 3)
        let kernel = Kernel(catalog: catalog, host: testHost, logger: quietLogger)
        let report = try await kernel.boot()
        let clash = try #require(report.diagnostics.with(.duplicateIdentifier).first)
        #expect(clash.message.contains("MosaicKernelTests.Alpha (code) and MosaicKernelTests.AlphaImpostor (code)"))
        #expect(report["com.test.alpha"]?.state.name == "failed")
        #expect(report["com.test.beta"]?.state.name == "blocked")
    }
}

@Suite struct BootReportTests {
    @Test("the table lists each module's version, state, time and reason, then problems and a summary")
    func table() async throws {
        let kernel = makeKernel([
            probe("com.app.weather", version: "1.4.0"),
            probe("com.app.sports", entitlements: ["sports"]),
            probe("com.app.broken", behavior: .fail),
        ])
        let report = try await kernel.boot()
        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("MODULE           VERSION  STATE    TIME"))
        #expect(lines[1].hasPrefix("com.app.weather  1.4.0    active   "))
        #expect(lines[2].hasPrefix("com.app.sports   1.0.0    blocked  "))
        #expect(lines[2].hasSuffix("it needs the entitlement 'sports', not granted."))
        let reasonColumn = try #require(lines[0].range(of: "REASON")).lowerBound.utf16Offset(in: lines[0])
        let reasonStart = try #require(lines[2].range(of: "it needs")).lowerBound.utf16Offset(in: lines[2])
        #expect(reasonColumn == reasonStart, "reasons line up under REASON")
        #expect(lines[3].contains("failed") && lines[3].hasSuffix("activate(_:) threw: the database is unreachable"))
        #expect(lines.contains { $0.hasPrefix("error[activation.failed] com.app.broken:") })
        #expect(lines.contains { $0.hasPrefix("warning[authorization.missing-entitlement] com.app.sports:") })
        #expect(lines.last?.hasPrefix("3 modules: 1 active, 1 failed, 1 blocked · booted in ") == true)
        #expect(report.diagnostics.first?.severity == .error, "most severe first")
        #expect(!report.isClean)
    }

    @Test("the report says how long each active module took to activate")
    func activationTimes() async throws {
        let report = try await makeKernel([probe("com.app.one"), probe("com.app.two", entitlements: ["x"])]).boot()
        #expect(report["com.app.one"]?.activationTime != nil)
        #expect(report["com.app.two"]?.activationTime == nil)
        #expect(report.duration > .zero)
    }
}

@Suite struct BootLogTests {
    @Test("boot writes a log line per module, one per problem, and the summary")
    func logLines() async throws {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "test.kernel") { _ in handler }
        let kernel = Kernel(
            catalog: catalog(probe("com.app.fine"), probe("com.app.locked", entitlements: ["pro"])),
            host: testHost, logger: logger)
        try await kernel.boot()
        let entries = handler.entries
        let fine = try #require(entries.first { $0.metadata["module"] == "com.app.fine" })
        #expect(fine.level == .info)
        #expect(fine.metadata["state"] == "active")
        let locked = try #require(entries.first { $0.metadata["module"] == "com.app.locked" })
        #expect(locked.level == .warning)
        #expect(locked.metadata["reason"] == "it needs the entitlement 'pro', not granted.")
        let messages = entries.map { $0.message.description }
        #expect(messages.contains { $0.hasPrefix("warning[authorization.missing-entitlement] com.app.locked") })
        let summary = messages.last ?? ""
        #expect(summary.hasPrefix("2 modules: 1 active, 1 blocked"))
    }
}
