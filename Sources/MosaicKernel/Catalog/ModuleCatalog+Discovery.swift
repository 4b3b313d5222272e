internal import Foundation
internal import Mosaic

extension ModuleCatalog {
    /// Reads every `*.json` manifest file in `directory` (not its subdirectories), in name order, and adds the
    /// module each names through its `entryPoint`.
    ///
    /// Nothing here throws or traps: an unreadable directory, a malformed file, an entry point the host did not
    /// register, or a file that disagrees with its module's own manifest becomes a diagnostic naming the file,
    /// and that file adds no module. Files with other extensions are ignored.
    ///
    /// - Parameters:
    ///   - directory: The directory to read.
    ///   - entryPoints: The factories a manifest file may name, by name.
    public mutating func discover(in directory: String, entryPoints: [String: ModuleFactory]) {
        for path in manifestPaths(in: directory) { readManifest(at: path, entryPoints: entryPoints) }
    }

    /// Reads every `*.json` manifest file in `directory` as ``discover(in:entryPoints:)`` does, with no code
    /// behind it: each sound file adds a module that only has its manifest, for checking manifests against each
    /// other (`mosaic validate DIR`). Such a module can never be activated.
    package mutating func discoverManifests(in directory: String) {
        for path in manifestPaths(in: directory) {
            let (file, problems) = ManifestFile.read(at: path)
            diagnostics += problems
            guard let manifest = file?.manifest else { continue }
            add(ModuleFactory(manifest: manifest) { ManifestOnly() }, origin: .manifestFile(path))
        }
    }

    /// The `*.json` files directly in `directory`, in name order; an unreadable directory is a diagnostic.
    private mutating func manifestPaths(in directory: String) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            diagnostics.append(
                Diagnostic(
                    .directoryUnreadable, .error, modules: [],
                    message: "the manifest directory could not be read (\(error.localizedDescription)).",
                    fix: "Create the directory, or point the kernel at the directory that holds the manifest files.",
                    location: .init(file: directory)))
            return []
        }
        return names.sorted().filter { $0.hasSuffix(".json") }.map {
            (directory as NSString).appendingPathComponent($0)
        }
    }

    /// Reads one manifest file and adds its module when the file is sound.
    public mutating func readManifest(at path: String, entryPoints: [String: ModuleFactory]) {
        let (file, problems) = ManifestFile.read(at: path)
        diagnostics += problems
        guard let file else { return }
        let location = Diagnostic.Location(file: path, keyPath: "entryPoint")
        guard let factory = entryPoints[file.entryPoint] else {
            let known = entryPoints.keys.sorted()
            let closest = known.min { editDistance(file.entryPoint, $0) < editDistance(file.entryPoint, $1) }
            diagnostics.append(
                Diagnostic(
                    .unknownEntryPoint, .error, modules: [file.manifest.id],
                    message: "the entry point '\(file.entryPoint.prefix(80))' is not registered by the host"
                        + (known.isEmpty
                            ? " (the host registered none)." : " (registered: \(known.joined(separator: ", ")))."),
                    fix: closest.map { "Use '\($0)' if that was meant, or register a factory under this name." }
                        ?? "Register a factory under this name when creating the catalog.",
                    location: location))
            return
        }
        let differences = Self.differences(file: file.manifest, code: factory.manifest)
        guard differences.isEmpty else {
            diagnostics.append(
                Diagnostic(
                    .manifestMismatch, .error, modules: [file.manifest.id],
                    message: "the file disagrees with \(factory.name), which '\(file.entryPoint)' creates: "
                        + differences.joined(separator: "; ") + ".",
                    fix: "Make the file and the module's manifest in code say the same thing (regenerate the file).",
                    location: .init(file: path)))
            return
        }
        add(factory, origin: .manifestFile(path))
    }

    /// Each field on which a file's manifest and the module's own manifest differ, as a phrase.
    static func differences(file: Manifest, code: Manifest) -> [String] {
        var differences: [String] = []
        func compare<Value: Equatable>(
            _ field: String, _ fileValue: Value, _ codeValue: Value, _ show: (Value) -> String
        ) {
            if fileValue != codeValue {
                differences.append("\(field) is \(show(fileValue)) in the file but \(show(codeValue)) in code")
            }
        }
        compare("id", file.id, code.id) { "'\($0)'" }
        compare("version", file.version, code.version) { "'\($0)'" }
        compare("entitlements", file.entitlements, code.entitlements) {
            "[\($0.sorted().map(\.name).joined(separator: ", "))]"
        }
        compare("dependencies", Set(file.dependencies), Set(code.dependencies)) {
            "[\($0.map(\.description).sorted().joined(separator: ", "))]"
        }
        compare("compatibility", file.compatibility, code.compatibility) { describe($0) }
        return differences
    }

    private static func describe(_ compatibility: Compatibility) -> String {
        let platforms = compatibility.platforms.map(\.description).joined(separator: ", ")
        let features = compatibility.features.sorted().joined(separator: ", ")
        return "host \(compatibility.host), platforms [\(platforms)], features [\(features)]"
    }
}

/// What a module read from a manifest file alone stands for: nothing runs it, since validation never makes modules.
private struct ManifestOnly: Module {
    static let manifest = Manifest(id: "mosaic.manifest-only", version: "0.0.0")
}
