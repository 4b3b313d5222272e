import ArgumentParser
import Configuration
import Foundation
import GhostApp
import Mosaic
import MosaicCommands
import MosaicHummingbird
import MosaicKernel
import Testing

/// Ghost's catalog, as `ghost validate` sees it.
enum GhostCommandHost: CommandableHost {
    static var commandHost: CommandHost {
        CommandHost(
            catalog: ModuleCatalog(groups: AppManifest.groups), environment: AppManifest.host,
            entitlements: AppManifest.defaultEntitlements, extensionPoints: WebHost.extensionPoints)
    }
}

/// A catalog with a cycle, a missing dependency and a version mismatch.
enum BrokenCommandHost: CommandableHost {
    static var commandHost: CommandHost {
        func module(_ id: ModuleID, _ version: SemanticVersion, _ requires: [Dependency]) -> ModuleFactory {
            let manifest = Manifest(id: id, version: version, requires: requires)
            return ModuleFactory(manifest: manifest) { NoModule(manifest) }
        }
        var catalog = ModuleCatalog()
        catalog.add(module("com.test.a", "1.0.0", [.module("com.test.b")]))
        catalog.add(module("com.test.b", "1.0.0", [.module("com.test.a")]))
        catalog.add(module("com.test.c", "1.0.0", [.module("com.test.missing")]))
        catalog.add(module("com.test.d", "1.0.0", [.module("com.test.e", from: "2.0.0")]))
        catalog.add(module("com.test.e", "1.0.0", []))
        return CommandHost(catalog: catalog, environment: HostEnvironment(version: "1.0.0"))
    }
}

/// A module made from a manifest that does nothing.
struct NoModule: Module {
    static let manifest = Manifest(id: "com.test.none", version: "1.0.0")
    init() {}
    init(_ manifest: Manifest) {}
}

/// The `ghost` executable built beside the tests.
func ghostExecutable() throws -> URL {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
    ].map { $0.appendingPathComponent("ghost") }
    return try #require(
        candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
        "ghost is built with the tests (swift build --build-tests); looked in \(candidates.map(\.path))")
}

/// Runs `program` with `arguments` to its end, `input` on its standard input: its exit status, standard output
/// and standard error (in a file, so that neither pipe can fill while the other is read).
func runToEnd(
    _ program: URL, _ arguments: [String], input: String? = nil
) async throws -> (status: Int32, output: String, errors: String) {
    try await offThePool { try runToEndBlocking(program, arguments, input: input) }
}

/// ``runToEnd(_:_:input:)``, waiting on the calling thread.
private func runToEndBlocking(
    _ program: URL, _ arguments: [String], input: String?
) throws -> (status: Int32, output: String, errors: String) {
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorsFile) }
    let errors = try FileHandle(forWritingTo: errorsFile)
    defer { try? errors.close() }
    process.standardError = errors
    let inputPipe = Pipe()
    if input == nil {
        process.standardInput = FileHandle.nullDevice
    } else {
        process.standardInput = inputPipe
    }
    try process.run()
    if let input {
        inputPipe.fileHandleForWriting.write(Data(input.utf8))
        try inputPipe.fileHandleForWriting.close()
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errorText = (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? ""
    return (process.terminationStatus, String(decoding: data, as: UTF8.self), errorText)
}

/// The path of `name` on `PATH`, if it is there.
func onPath(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// A module that declares configuration keys: a secret with a default, a plain one with a default, a required one.
struct ConfiguredModule: Module {
    static let manifest = Manifest(id: "com.test.configured", version: "1.0.0")

    static func register(in module: inout ModuleRegistrar) {
        module.configuration(
            ConfigurationKey<String>("apiKey", default: "hunter2-default", secret: true),
            ConfigurationKey<Int>("refreshMinutes", default: 15), ConfigurationKey<String>("region"))
    }
}

/// A host of ``ConfiguredModule`` alone.
enum ConfiguredCommandHost: CommandableHost {
    static var commandHost: CommandHost {
        CommandHost(
            catalog: ModuleCatalog(modules: [ConfiguredModule.self]), environment: HostEnvironment(version: "1.0.0"))
    }
}

/// ``ConfiguredModule`` with its required key supplied by the host's configuration providers.
enum SuppliedCommandHost: CommandableHost {
    static var commandHost: CommandHost {
        var options = KernelOptions()
        options.configurationProviders = [
            InMemoryProvider(values: [
                AbsoluteConfigKey(["com", "test", "configured", "region"]): ConfigValue(.string("eu"), isSecret: false)
            ])
        ]
        return CommandHost(
            catalog: ModuleCatalog(modules: [ConfiguredModule.self]), environment: HostEnvironment(version: "1.0.0"),
            options: options)
    }
}

@Suite struct CommandTests {
    @Test("validate reads the host's configuration providers: a required key without a value fails, with the fix")
    func configurationChecked() throws {
        let (missing, failed) = try Validate<ConfiguredCommandHost>.parse([]).output()
        #expect(failed)
        #expect(missing.contains("[configuration.missing]"), "\(missing)")
        #expect(missing.contains("fix: Set the environment variable COM_TEST_CONFIGURED_REGION"), "\(missing)")
        #expect(!missing.contains("hunter2"))
        let (supplied, suppliedFailed) = try Validate<SuppliedCommandHost>.parse([]).output()
        #expect(!suppliedFailed, "\(supplied)")
    }

    @Test("validate finds nothing wrong with Ghost's catalog, in-process and as `ghost validate` (exit 0)")
    func ghostIsClean() async throws {
        let (text, failed) = try Validate<GhostCommandHost>.parse([]).output()
        #expect(!failed, "\(text)")
        #expect(text.contains("0 error(s), 0 warning(s)"))
        #expect(
            text.contains("com.ghost.sports starts on demand, on: a link to sports/team; the content of sports.scores"))
        let run = try await runToEnd(try ghostExecutable(), ["validate"])
        #expect(run.status == 0, "\(run.output)")
    }

    @Test("validate reports a cycle, a missing dependency and a version mismatch, with fixes, and fails")
    func brokenCatalog() throws {
        let (text, failed) = try Validate<BrokenCommandHost>.parse([]).output()
        #expect(failed)
        for code in ["dependency.cycle", "dependency.missing", "dependency.version-mismatch"] {
            #expect(text.contains("[\(code)]"), "\(text)")
        }
        #expect(text.components(separatedBy: "fix: ").count >= 4)
        #expect(throws: ExitCode(1)) { try Validate<BrokenCommandHost>.parse([]).run() }
    }

    @Test("validate --format json parses and carries the stable codes")
    func json() throws {
        let (text, _) = try Validate<BrokenCommandHost>.parse(["--format", "json"]).output()
        let records = try #require(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], "\(text)")
        let codes = Set(records.compactMap { $0["code"] as? String })
        #expect(codes.isSuperset(of: ["dependency.cycle", "dependency.missing", "dependency.version-mismatch"]))
        #expect(records.allSatisfy { ($0["fix"] as? String)?.isEmpty == false })
    }

    @Test("graph --format dot has every edge the graph plans, the service-inferred ones included")
    func dotHasEveryEdge() async throws {
        let graph = GhostCommandHost.commandHost.graph
        let dot = try await Graph<GhostCommandHost>.parse(["--format", "dot"]).output()
        #expect(graph.edges.contains { $0.kind == .service } || graph.edges.contains { $0.kind == .required })
        for edge in graph.edges {
            #expect(dot.contains("\"\(edge.from)\" -> \"\(edge.to)\""), "missing \(edge)")
        }
    }

    @Test("graph --format svg draws the same edges as the web host's /graph")
    func svgMatchesWebGraph() async throws {
        let svg = try await Graph<GhostCommandHost>.parse(["--format", "svg"]).output()
        let host = GhostCommandHost.commandHost
        let web = GraphDrawing(host.graph).svg
        #expect(svg.trimmingCharacters(in: .whitespacesAndNewlines) == web)
        for edge in host.graph.edges {
            #expect(svg.contains("data-from=\"\(edge.from)\" data-to=\"\(edge.to)\""))
        }
    }

    @Test("a canvas of Weather lists its service, contributions, deeplink, events and state keys")
    func weatherCanvas() throws {
        let text = try Canvas<GhostCommandHost>.parse(["com.ghost.weather"]).output()
        for fact in [
            "WeatherData (singleton)", "mosaic.dashboard-widgets: weather.today", "ghost://<tab>/weather/city",
            "FeatureOpened", "ghost.favourite-city", "## Configuration keys",
        ] {
            #expect(text.contains(fact), "\(fact) missing from:\n\(text)")
        }
    }

    @Test("canvas and graph name the modules there are when given one that is not")
    func unknownModule() async throws {
        #expect(throws: ValidationError.self) { try Canvas<GhostCommandHost>.parse(["com.ghost.nope"]).output() }
        await #expect(throws: ValidationError.self) {
            try await Graph<GhostCommandHost>.parse(["--module", "com.ghost.nope"]).output()
        }
    }

    @Test("a canvas lists configuration keys with kind, default and environment variable; a secret's default never")
    func configurationKeys() throws {
        let text = try Canvas<ConfiguredCommandHost>.parse(["com.test.configured"]).output()
        for fact in [
            "com.test.configured.apiKey (string, has a default, secret) · environment COM_TEST_CONFIGURED_API_KEY",
            "com.test.configured.refreshMinutes (int, default 15) · environment COM_TEST_CONFIGURED_REFRESH_MINUTES",
            "com.test.configured.region (string, required) · environment COM_TEST_CONFIGURED_REGION",
        ] {
            #expect(text.contains(fact), "\(fact) missing from:\n\(text)")
        }
        #expect(!text.contains("hunter2"))
        let html = try Canvas<ConfiguredCommandHost>.parse(["com.test.configured", "--format", "html"]).output()
        #expect(!html.contains("hunter2"))
        #expect(html.contains("data-section=\"Configuration keys\""))
    }

    @Test("open boots the modules, opens a link and says who handled it; a bad link says why and fails")
    func openLink() async throws {
        let handled = try await Open<GhostCommandHost>.parse(["ghost://dashboard/weather/city?name=Oslo"]).output()
        #expect(handled.handled, "\(handled.text)")
        #expect(handled.text.contains("by com.ghost.weather"), "\(handled.text)")
        let unknown = try await Open<GhostCommandHost>.parse(["ghost://dashboard/weather/city?name=Atlantis"])
            .output()
        #expect(!unknown.handled)
        #expect(unknown.text.contains("fix: "), "\(unknown.text)")
        let foreign = try await Open<GhostCommandHost>.parse(["https://example.com/weather"]).output()
        #expect(!foreign.handled)
        #expect(foreign.text.contains("[scheme-not-allowed]"), "\(foreign.text)")
    }

    @Test("ghost exits 0 when clean, 1 on a link not handled, 2 on a usage error (with the fix on standard error)")
    func exitCodes() async throws {
        let ghost = try ghostExecutable()
        let opened = try await runToEnd(ghost, ["open", "ghost://dashboard/weather/city?name=Oslo"])
        #expect(opened.status == 0, "\(opened.output)\(opened.errors)")
        let failed = try await runToEnd(ghost, ["open", "ghost://dashboard/weather/city?name=Atlantis"])
        #expect(failed.status == 1, "\(failed.output)\(failed.errors)")
        #expect(failed.output.contains("not handled"))
        let badFormat = try await runToEnd(ghost, ["validate", "--format", "xml"])
        #expect(badFormat.status == 2, "\(badFormat.errors)")
        #expect(badFormat.errors.contains("text") && badFormat.errors.contains("json"), "\(badFormat.errors)")
        let unknownModule = try await runToEnd(ghost, ["canvas", "com.ghost.nope"])
        #expect(unknownModule.status == 2, "\(unknownModule.errors)")
        #expect(unknownModule.errors.contains("com.ghost.weather"), "\(unknownModule.errors)")
        let help = try await runToEnd(ghost, ["graph", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--format"))
    }

    @Test(
        "graph --format dot is valid Graphviz: dot draws it as SVG",
        .enabled(if: OutsidePrograms.graphviz.shouldRun, OutsidePrograms.graphviz.skipReason))
    func dotParses() async throws {
        guard OutsidePrograms.graphviz.requirePresent() else { return }
        let dotProgram = try #require(onPath("dot"))
        for arguments in [["--format", "dot"], ["--format", "dot", "--module", "com.ghost.weather"]] {
            let text = try await Graph<GhostCommandHost>.parse(arguments).output()
            let drawn = try await runToEnd(dotProgram, ["-Tsvg"], input: text)
            #expect(drawn.status == 0, "dot rejected \(arguments): \(drawn.errors)\n\(text)")
            #expect(drawn.output.contains("<svg"))
        }
    }
}
