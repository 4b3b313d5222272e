internal import ArgumentParser
internal import Foundation

/// Where a generated package finds Mosaic: the path its `Package.swift` names, and the package identity
/// SwiftPM gives it (the directory's last component, lowercased).
struct MosaicLocation {
    /// What `mosaic new` assumes without `--mosaic-path`: a checkout named `mosaic` beside the new package.
    static let defaultPath = "../mosaic"

    /// The path as `Package.swift` writes it.
    let path: String
    /// The identity products are named by in `Package.swift`.
    let identity: String
    /// Why this path, for a comment in `Package.swift`.
    let note: String

    /// The default when `given` is `nil`; otherwise `given`, made absolute against the current directory, which
    /// must hold a `Package.swift`.
    init(_ given: String?) throws {
        guard let given else {
            path = Self.defaultPath
            identity = "mosaic"
            note = "a checkout named mosaic beside this package (mosaic new ... --mosaic-path sets another)."
            return
        }
        let url = URL(fileURLWithPath: given).standardizedFileURL
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) else {
            throw ValidationError(
                "--mosaic-path \(given) has no Package.swift; point it at a Mosaic checkout (the directory with "
                    + "Mosaic's Package.swift).")
        }
        path = url.path
        identity = url.lastPathComponent.lowercased()
        note = "the checkout \(url.path)."
    }
}
