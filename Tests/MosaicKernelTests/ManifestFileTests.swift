import Foundation
import Mosaic
import MosaicKernel
import Testing

@Suite struct ManifestFileTests {
    private let entryPoints = [
        "WeatherModule": probe(
            "com.ghost.weather", version: "1.4.0", requires: [.module("com.ghost.location", "1.0.0"..<"2.0.0")],
            entitlements: ["weather"]),
        "LocationModule": probe("com.ghost.location", version: "1.2.0"),
    ]

    private let weatherJSON = """
        {
          "id": "com.ghost.weather",
          "version": "1.4.0",
          "entryPoint": "WeatherModule",
          "entitlements": ["weather"],
          "dependencies": [{ "id": "com.ghost.location", "versions": "1.0.0..<2.0.0" }]
        }
        """

    @Test("manifest files are read in name order, and modules found there boot with those listed in code")
    func discovery() async throws {
        let path = try temporaryDirectory(with: [
            "weather.json": weatherJSON,
            "README.txt": "not a manifest",
            "location.json": #"{"id": "com.ghost.location", "version": "1.2.0", "entryPoint": "LocationModule"}"#,
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog(modules: [])
        catalog.add(probe("com.ghost.art"))
        catalog.discover(in: path, entryPoints: entryPoints)
        #expect(catalog.diagnostics.isEmpty)
        #expect(catalog.entries.map(\.manifest.id) == ["com.ghost.art", "com.ghost.location", "com.ghost.weather"])
        #expect(catalog.entries.last?.origin == .manifestFile(path + "/weather.json"))
        let kernel = Kernel(catalog: catalog, host: testHost, entitlements: .granted(["weather"]), logger: quietLogger)
        #expect(try await kernel.boot().count("active") == 3)
    }

    @Test("a malformed JSON file gives a diagnostic with the file, line and column")
    func malformedJSON() throws {
        let path = try temporaryDirectory(with: [
            "broken.json": "{\n  \"id\": \"com.ghost.weather\",\n  \"version\": 1.4.0\n}"
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: entryPoints)
        let diagnostic = try #require(catalog.diagnostics.first)
        #expect(catalog.entries.isEmpty)
        #expect(diagnostic.code == .manifestMalformed)
        #expect(diagnostic.location?.file == path + "/broken.json")
        #expect(diagnostic.location?.line == 3)
        #expect(diagnostic.location?.column == 17)
        #expect(diagnostic.description.hasPrefix("\(path)/broken.json:3:17: error[discovery.manifest-malformed]"))
        #expect(diagnostic.fix == "Correct the JSON at line 3, column 17.")
    }

    @Test(
        "files that are JSON but not manifests say which value is wrong",
        arguments: [
            (#"[1, 2]"#, "holds a JSON array, not an object", nil as String?),
            (#"{"version": "1.0.0", "entryPoint": "X"}"#, "the required key 'id' is missing", "id"),
            (#"{"id": 7, "version": "1.0.0", "entryPoint": "X"}"#, "the value at id should be a string", "id"),
            (
                #"{"id": "com.a.b", "version": "1.0.0", "entryPoint": "X", "dependencies": [{"id": "com.c.d", "versions": "soon"}]}"#,
                "'soon' is not a version range", "dependencies[0].versions"
            ),
            ("", "the file is empty", nil),
        ])
    func wrongShape(_ contents: String, _ expected: String, _ keyPath: String?) throws {
        let path = try temporaryDirectory(with: ["bad.json": contents])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: entryPoints)
        let diagnostic = try #require(catalog.diagnostics.first)
        #expect(diagnostic.message.contains(expected), "\(diagnostic.message)")
        #expect(diagnostic.location?.keyPath == keyPath)
        #expect(catalog.entries.isEmpty)
    }

    @Test("an unknown key is a warning that suggests the key that was probably meant")
    func unknownKey() throws {
        let path = try temporaryDirectory(with: [
            "weather.json": weatherJSON.replacingOccurrences(of: "\"entitlements\"", with: "\"entitlement\"")
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: entryPoints)
        let warning = try #require(catalog.diagnostics.with(.manifestUnknownKey).first)
        #expect(warning.severity == .warning)
        #expect(warning.fix == "Rename it to 'entitlements' if that was meant, or remove it.")
        // Without its entitlements the file now disagrees with the module's own manifest.
        #expect(
            catalog.diagnostics.with(.manifestMismatch).first?.message.contains(
                "entitlements is [] in the file but [weather] in code") == true)
    }

    @Test("an entry point the host did not register is named, with the closest registered one")
    func unknownEntryPoint() throws {
        let path = try temporaryDirectory(with: [
            "weather.json": weatherJSON.replacingOccurrences(of: "WeatherModule", with: "WeatherModul")
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: entryPoints)
        let diagnostic = try #require(catalog.diagnostics.first)
        #expect(diagnostic.code == .unknownEntryPoint)
        #expect(diagnostic.modules == ["com.ghost.weather"])
        #expect(diagnostic.fix.hasPrefix("Use 'WeatherModule' if that was meant"))
    }

    @Test("a file that disagrees with its module's manifest lists every difference")
    func mismatch() throws {
        let path = try temporaryDirectory(with: [
            "weather.json": weatherJSON.replacingOccurrences(of: "1.4.0", with: "1.3.0")
                .replacingOccurrences(of: "1.0.0..<2.0.0", with: "^1.0.0")
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var catalog = ModuleCatalog()
        catalog.discover(in: path, entryPoints: entryPoints)
        let diagnostic = try #require(catalog.diagnostics.first)
        #expect(diagnostic.code == .manifestMismatch)
        #expect(diagnostic.message.contains("version is '1.3.0' in the file but '1.4.0' in code"))
        #expect(!diagnostic.message.contains("dependencies"), "^1.0.0 and 1.0.0..<2.0.0 are the same range")
        #expect(catalog.entries.isEmpty)
    }

    @Test("an unreadable directory is a diagnostic, not a crash")
    func missingDirectory() {
        var catalog = ModuleCatalog()
        catalog.discover(in: "/nonexistent/mosaic/modules", entryPoints: entryPoints)
        #expect(catalog.diagnostics.map(\.code) == [.directoryUnreadable])
        #expect(catalog.diagnostics.first?.location?.file == "/nonexistent/mosaic/modules")
    }

    @Test("random bytes in a manifest file never crash discovery and always explain themselves")
    func randomBytes() throws {
        var generator = SystemRandomNumberGenerator()
        let path = try temporaryDirectory(with: [:])
        defer { try? FileManager.default.removeItem(atPath: path) }
        for round in 0..<200 {
            var text = Array(weatherJSON.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                text[Int.random(in: 0..<text.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let file = "\(path)/round-\(round).json"
            try Data(text).write(to: URL(fileURLWithPath: file))
            var catalog = ModuleCatalog()
            catalog.readManifest(at: file, entryPoints: entryPoints)
            #expect(
                catalog.entries.count + catalog.diagnostics.filter(atLeast: .error).count == 1,
                "each file yields a module or an error: \(catalog.diagnostics)")
            #expect(catalog.diagnostics.allSatisfy { $0.location?.file == file && !$0.fix.isEmpty })
        }
    }
}
