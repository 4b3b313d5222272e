import ArgumentParser
import Foundation
import MosaicTool
import Testing

/// A new temporary directory, removed by `body`'s end.
func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-tool-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// Manifest files with a cycle (a ↔ b), a missing dependency (c), a version mismatch (d wants e 2.x, e is 1.0.0),
/// a file that is not JSON, and a directory where a file should be.
func writeBrokenManifests(in directory: URL) throws {
    let files = [
        "a.json":
            #"{"id": "com.test.a", "version": "1.0.0", "entryPoint": "A", "dependencies": [{"id": "com.test.b"}]}"#,
        "b.json":
            #"{"id": "com.test.b", "version": "1.0.0", "entryPoint": "B", "dependencies": [{"id": "com.test.a"}]}"#,
        "c.json":
            #"{"id": "com.test.c", "version": "1.0.0", "entryPoint": "C", "dependencies": [{"id": "com.test.missing"}]}"#,
        "d.json": #"{"id": "com.test.d", "version": "1.0.0", "entryPoint": "D", "#
            + #""dependencies": [{"id": "com.test.e", "versions": "2.0.0..<3.0.0"}]}"#,
        "e.json": #"{"id": "com.test.e", "version": "1.0.0", "entryPoint": "E", "entitlements": ["payments"], "#
            + #""compatibility": {"host": "^2.0.0"}}"#,
        "broken.json": #"{"id": "com.test.f","#,
    ]
    for (name, text) in files {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }
    try FileManager.default.createDirectory(
        at: directory.appendingPathComponent("folder.json"), withIntermediateDirectories: false)
}

/// Sound manifest files: e 1.0.0, and d that requires it.
func writeSoundManifests(in directory: URL) throws {
    try Data(#"{"id": "com.test.e", "version": "1.0.0", "entryPoint": "E", "entitlements": ["payments"]}"#.utf8)
        .write(to: directory.appendingPathComponent("e.json"))
    try Data(
        #"{"id": "com.test.d", "version": "1.0.0", "entryPoint": "D", "dependencies": [{"id": "com.test.e"}]}"#.utf8
    ).write(to: directory.appendingPathComponent("d.json"))
}

/// The `mosaic` executable built beside the tests.
func mosaicExecutable() throws -> URL {
    try ghostExecutable().deletingLastPathComponent().appendingPathComponent("mosaic")
}

@Suite struct MosaicToolTests {
    @Test("mosaic validate DIR reports the cycle, the missing dependency and the version mismatch with fixes")
    func validateBroken() async throws {
        try await withTemporaryDirectory { directory in
            try writeBrokenManifests(in: directory)
            let (text, failed) = try ValidateDirectory.parse([directory.path, "--host-version", "2.1.0"]).output()
            #expect(failed)
            for code in ["dependency.cycle", "dependency.missing", "dependency.version-mismatch"] {
                #expect(text.contains("error [\(code)]"), "\(code) missing from:\n\(text)")
            }
            #expect(text.contains("fix: Add com.test.missing to the catalog"), "\(text)")
            #expect(text.contains("fix: Install a version of com.test.e in 2.0.0..<3.0.0"), "\(text)")
            #expect(text.contains("fix: Remove one dependency of this path"), "\(text)")
            // The files that could not be read or parsed are diagnostics naming them, not a crash.
            #expect(text.contains("broken.json:1:21") && text.contains("not valid JSON"), "\(text)")
            #expect(text.contains("folder.json") && text.contains("a directory, not a manifest file"), "\(text)")
            let run = try await runToEnd(
                try mosaicExecutable(), ["validate", directory.path, "--host-version", "2.1.0"])
            #expect(run.status == 1, "\(run.output)\(run.errors)")
            #expect(run.output.contains("[dependency.cycle]"))
        }
    }

    @Test("mosaic validate DIR --format json parses and carries the codes, under the host version and grants given")
    func validateJSON() async throws {
        try await withTemporaryDirectory { directory in
            try writeBrokenManifests(in: directory)
            func codes(_ arguments: [String]) throws -> Set<String> {
                let (text, failed) = try ValidateDirectory.parse([directory.path, "--format", "json"] + arguments)
                    .output()
                #expect(failed)
                let records = try #require(
                    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], "\(text)")
                #expect(records.contains { ($0["location"] as? String)?.hasSuffix("broken.json:1:21") == true })
                #expect(records.allSatisfy { ($0["fix"] as? String)?.isEmpty == false })
                return Set(records.compactMap { $0["code"] as? String })
            }
            let granted = try codes(["--host-version", "2.1.0", "--grant", "weather"])
            #expect(
                granted.isSuperset(of: [
                    "dependency.cycle", "dependency.missing", "dependency.version-mismatch",
                    "discovery.manifest-malformed", "authorization.missing-entitlement",
                ]), "\(granted)")
            // Without --grant every entitlement the files name is granted.
            #expect(!(try codes(["--host-version", "2.1.0"])).contains("authorization.missing-entitlement"))
            #expect(try codes(["--host-version", "1.0.0"]).contains("compatibility.host-version"))
        }
    }

    @Test("mosaic validate DIR exits 0 on sound files, 2 without a host version")
    func validateClean() async throws {
        try await withTemporaryDirectory { directory in
            try writeSoundManifests(in: directory)
            let (text, failed) = try ValidateDirectory.parse([directory.path, "--host-version", "1.0.0"]).output()
            #expect(!failed, "\(text)")
            #expect(text.contains("0 error(s)"), "\(text)")
            let mosaic = try mosaicExecutable()
            let clean = try await runToEnd(mosaic, ["validate", directory.path, "--host-version", "1.0.0"])
            #expect(clean.status == 0, "\(clean.output)\(clean.errors)")
            let usage = try await runToEnd(mosaic, ["validate", directory.path])
            #expect(usage.status == 2)
            #expect(usage.errors.contains("--host-version"), "\(usage.errors)")
        }
    }

    @Test("mosaic new module writes the interface, the module, a MosaicTesting test and a README")
    func newModule() async throws {
        try await withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("payments")
            let mosaicCheckout = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            let output = try NewModule.parse([
                "com.acme.payments", "--path", target.path, "--mosaic-path", mosaicCheckout.path,
            ]).generate()
            #expect(output.contains("Sources/PaymentsModule/PaymentsModule.swift"))
            func read(_ path: String) throws -> String {
                try String(contentsOf: target.appendingPathComponent(path), encoding: .utf8)
            }
            #expect(try read("Package.swift").contains(".package(path: \"\(mosaicCheckout.path)\")"))
            #expect(try read("Sources/PaymentsInterface/PaymentsService.swift").contains("public static var payments"))
            let module = try read("Sources/PaymentsModule/PaymentsModule.swift")
            #expect(module.contains("Manifest(id: \"com.acme.payments\", version: \"0.1.0\")"))
            #expect(module.contains("module.services.singleton(.payments)"))
            let test = try read("Tests/PaymentsModuleTests/PaymentsModuleTests.swift")
            #expect(test.contains("import MosaicTesting") && test.contains("TestHarness(PaymentsModule.self)"))
            #expect(try read("README.md").contains("com.acme.payments"))
        }
    }

    @Test("mosaic new module rejects an invalid identifier naming the rule, and a non-empty directory (exit 2)")
    func newModuleRefuses() async throws {
        #expect(throws: (any Error).self) { try NewModule.parse(["Com.Acme"]) }
        let mosaic = try mosaicExecutable()
        let invalid = try await runToEnd(mosaic, ["new", "module", "payments"])
        #expect(invalid.status == 2)
        #expect(invalid.errors.contains("use at least two segments"), "\(invalid.errors)")
        try await withTemporaryDirectory { directory in
            try Data("mine".utf8).write(to: directory.appendingPathComponent("notes.txt"))
            let refused = try await runToEnd(mosaic, ["new", "module", "com.acme.payments", "--path", directory.path])
            #expect(refused.status == 2, "\(refused.errors)")
            #expect(refused.errors.contains("is not empty"), "\(refused.errors)")
            let kept = try String(contentsOf: directory.appendingPathComponent("notes.txt"), encoding: .utf8)
            #expect(kept == "mine")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
        }
    }

    @Test("mosaic new host writes an executable with the embedded commands and its module list")
    func newHost() async throws {
        try await withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("shop")
            _ = try NewHost.parse(["Shop", "--path", target.path]).generate()
            let entry = try String(
                contentsOf: target.appendingPathComponent("Sources/shop/Shop.swift"), encoding: .utf8)
            #expect(entry.contains("MosaicCommands.all(for: ShopHost.self)"))
            #expect(entry.contains("await MosaicCommands.main(Shop.self)"))
            let modules = try String(
                contentsOf: target.appendingPathComponent("Sources/shop/AppModules.swift"), encoding: .utf8)
            #expect(modules.contains("enum AppModules: ModuleGroup"))
            let manifest = try String(contentsOf: target.appendingPathComponent("Package.swift"), encoding: .utf8)
            #expect(manifest.contains(".package(path: \"../mosaic\")"))
            #expect(manifest.contains(".product(name: \"MosaicCommands\", package: \"mosaic\")"))
            #expect(throws: (any Error).self) { try NewHost.parse(["9lives"]) }
        }
    }
}
