import Foundation
@_spi(Hosting) import Mosaic
import MosaicKernel
import Testing

/// Input from outside (manifest files, links) gets a bounded, readable diagnostic that names where it came from,
/// and never traps.
@Suite struct HostileInputTests {
    private func manifest(id: String = "com.ghost.weather", version: String = "1.4.0", extra: String = "") -> String {
        #"{"id": "\#(id)", "version": "\#(version)", "entryPoint": "WeatherModule"\#(extra)}"#
    }

    @Test(
        "a version that trapped the old parser, in every version field of a manifest, is a diagnostic",
        arguments: [
            #"{"id": "com.ghost.weather", "version": "1.0.+0-x", "entryPoint": "WeatherModule"}"#,
            #"{"id": "com.ghost.weather", "version": "1.4.0", "entryPoint": "WeatherModule", "dependencies": [{"id": "com.ghost.location", "versions": "1.0.+0-x..<2.0.0"}]}"#,
            #"{"id": "com.ghost.weather", "version": "1.4.0", "entryPoint": "WeatherModule", "compatibility": {"host": "^1.0.+0-x"}}"#,
            #"{"id": "com.ghost.weather", "version": "1.4.0", "entryPoint": "WeatherModule", "compatibility": {"host": "^9223372036854775807.0.0"}}"#,
            #"{"id": "com.ghost.weather", "version": "1.4.0", "entryPoint": "WeatherModule", "compatibility": {"platforms": [{"name": "linux", "min": "1.0.+0-x"}]}}"#,
            #"{"id": "com.ghost.weather", "version": "1.4.0", "entryPoint": "WeatherModule", "compatibility": {"platforms": [{"name": "linux", "max": "1.+0.0-x"}]}}"#,
        ])
    func trappingVersions(_ json: String) throws {
        let path = try temporaryDirectory(with: ["weather.json": json])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: ["WeatherModule": probe("com.ghost.weather", version: "1.4.0")])
        #expect(catalog.entries.isEmpty)
        let diagnostic = try #require(catalog.diagnostics.first)
        #expect(diagnostic.location?.file == path + "/weather.json")
        #expect(diagnostic.description.utf8.count < 1_024, "\(diagnostic)")
    }

    @Test("a 1 MB identifier gives diagnostics under 1 KB that name the file and state the length")
    func hugeIdentifier() throws {
        let id = String(repeating: "a", count: 1_000_000)
        let path = try temporaryDirectory(with: ["weather.json": manifest(id: id)])
        defer { try? FileManager.default.removeItem(atPath: path) }
        for code in [ModuleID("com.ghost.weather"), ModuleID(id)] {
            var catalog = ModuleCatalog()
            catalog.discover(in: path, entryPoints: ["WeatherModule": probe(code, version: "1.4.0")])
            let diagnostics = Kernel.validate(catalog, host: testHost, entitlements: .granted([]))
            #expect(!diagnostics.isEmpty)
            for diagnostic in diagnostics {
                #expect(diagnostic.description.utf8.count < 1_024, "\(diagnostic.description.prefix(2_000))")
                #expect(diagnostic.location?.file == path + "/weather.json")
                #expect(diagnostic.description.contains("(1000000 bytes)"))
            }
        }
    }

    @Test("every diagnostic about a module read from a manifest file names the file and the key")
    func diagnosticsNameTheirFile() throws {
        let path = try temporaryDirectory(with: [
            "weather.json": manifest(
                version: "1.4", extra: #", "dependencies": [{"id": "com.ghost.location", "versions": "^1.0.0"}]"#)
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let code = probe("com.ghost.weather", version: "1.4", requires: [.module("com.ghost.location", .from("1.0.0"))])
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: ["WeatherModule": code])
        let diagnostics = Kernel.validate(catalog, host: testHost, entitlements: .granted([]))
        let version = try #require(diagnostics.first { $0.code == .invalidVersion })
        #expect(version.location == Diagnostic.Location(file: path + "/weather.json", keyPath: "version"))
        let missing = try #require(diagnostics.first { $0.code == .missingDependency })
        #expect(missing.location == Diagnostic.Location(file: path + "/weather.json", keyPath: "dependencies[0].id"))
        #expect(
            missing.description.hasPrefix(path + "/weather.json (at dependencies[0].id): error[dependency.missing]"))
    }

    @Test("a misspelt dependency gets 'did you mean', and the fix names both ways to resolve it")
    func didYouMean() throws {
        let diagnostics = Kernel.validate(
            catalog(
                probe("com.ghost.weather"),
                probe("com.ghost.dashboard", requires: [.module("com.ghost.wether", .from("1.0.0"))])),
            host: testHost, entitlements: .granted([]))
        let missing = try #require(diagnostics.first { $0.code == .missingDependency })
        #expect(
            missing.message
                == "com.ghost.dashboard requires com.ghost.wether, which is not installed. Did you mean com.ghost.weather?"
        )
        #expect(
            missing.fix
                == "If com.ghost.weather was meant, correct the dependency in com.ghost.dashboard's manifest; "
                + "otherwise add com.ghost.wether to the catalog, or declare the dependency optional in "
                + "com.ghost.dashboard's manifest.")
        let far = Kernel.validate(
            catalog(probe("com.ghost.dashboard", requires: [.module("com.other.thing", .from("1.0.0"))])),
            host: testHost, entitlements: .granted([]))
        #expect(far.first { $0.code == .missingDependency }?.message.contains("Did you mean") == false)
    }

    @Test("two services of one name in different modules of code read differently in every diagnostic")
    func qualifiedServiceNames() {
        let diagnostics = Kernel.validate(
            catalog(
                serviceModule("com.app.one") { $0.services.use(ServiceKey(Warehouse.Store.self)) },
                serviceModule("com.app.two") { $0.services.use(ServiceKey(Shop.Store.self)) }),
            host: testHost)
        let messages = diagnostics.filter { $0.code == .missingServiceProvider }.map(\.message)
        #expect(
            messages == [
                "com.app.one uses MosaicKernelTests.Warehouse.Store, which no module and not the host provides.",
                "com.app.two uses MosaicKernelTests.Shop.Store, which no module and not the host provides.",
            ])
    }

    @Test("a default kernel accepts only its host's schemes, from text and from built links")
    func schemes() async throws {
        let kernel = makeKernel([])
        try await kernel.boot()
        for text in ["javascript://dashboard/weather/city?name=x", "file://dashboard/x", "http://dashboard"] {
            guard case .notHandled(let error) = await kernel.open(text) else {
                Issue.record("\(text) must be refused")
                continue
            }
            #expect(error.code == .schemeNotAllowed)
            #expect(error.message.hasSuffix("is not accepted here; this host accepts ghost."), "\(error.message)")
        }
        let built = Deeplink(scheme: "javascript", tab: "dashboard", feature: "weather", action: "city")
        guard case .notHandled(let error) = await kernel.open(built) else {
            Issue.record("a built link with a foreign scheme must be refused")
            return
        }
        #expect(error.code == .schemeNotAllowed)
        #expect(await kernel.open("ghost://dashboard") == .handled(tab: "dashboard", module: nil))
        await kernel.shutdown()
    }

    @Test("a host that declares no scheme refuses every link, saying how to declare one")
    func noSchemes() async throws {
        let kernel = Kernel(
            catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), entitlements: .granted([]),
            logger: quietLogger)
        try await kernel.boot()
        guard case .notHandled(let error) = await kernel.open("ghost://dashboard") else {
            Issue.record("with no scheme declared nothing may be accepted")
            return
        }
        #expect(error.message == "The scheme 'ghost' is not accepted: this host declares no link schemes.")
        #expect(error.fix.contains("HostEnvironment(version: …, schemes: [\"myapp\"])"))
        await kernel.shutdown()
    }

    @Test("a manifest that is a link to an endless file is refused after its size limit, not read to the end")
    func symlinkToEndlessFile() throws {
        let path = try temporaryDirectory(with: [:])
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createSymbolicLink(atPath: path + "/zero.json", withDestinationPath: "/dev/zero")
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: [:])
        #expect(catalog.diagnostics.map(\.code) == [.manifestMalformed])
        #expect(catalog.diagnostics.first?.message.contains("more than 1048576 bytes") == true)
    }

    @Test("link schemes are compared without case, however the allowed set was filled")
    func schemeCase() throws {
        var rules = DeeplinkRules()
        rules.allowedSchemes = ["MyApp"]
        #expect(throws: Never.self) { try Deeplink(parsing: "myapp://tab", rules: rules) }
        #expect(throws: DeeplinkError.self) { try Deeplink(parsing: "other://tab", rules: rules) }
    }
}

/// Two services of one name, in two namespaces.
enum Warehouse { struct Store {} }
enum Shop { struct Store {} }
