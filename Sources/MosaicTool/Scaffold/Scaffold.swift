internal import ArgumentParser
internal import Foundation

/// A file `mosaic new` could not write, with the fix (exit 1); problems with the arguments are `ValidationError`s
/// (exit 2).
struct ScaffoldError: Error, CustomStringConvertible {
    /// The problem and the fix.
    let description: String

    init(_ description: String) { self.description = description }
}

/// Writing a generated package.
enum Scaffold {
    /// Writes `files` (by path inside `directory`) into `directory`, which must be missing or empty: nothing the
    /// user has is ever overwritten. Returns the paths written, sorted.
    static func write(_ files: [String: String], into directory: String) throws -> [String] {
        let manager = FileManager.default
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: root.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw ValidationError("\(root.path) is a file; choose a new or empty directory with --path.")
            }
            let contents = (try? manager.contentsOfDirectory(atPath: root.path)) ?? []
            guard contents.isEmpty else {
                throw ValidationError(
                    "\(root.path) is not empty (it has \(contents.sorted().prefix(3).joined(separator: ", "))"
                        + (contents.count > 3 ? ", …" : "") + "); choose a new or empty directory with --path.")
            }
        }
        for (path, text) in files {
            let file = root.appendingPathComponent(path)
            do {
                try manager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: file, options: .withoutOverwriting)
            } catch {
                throw ScaffoldError(
                    "Cannot write \(file.path) (\(error.localizedDescription)); check that the directory is writable.")
            }
        }
        return files.keys.sorted()
    }

    /// `Payments` for `payments`, `OrderHistory` for `order-history`: a segment of an identifier as a type name.
    static func typeName(_ segment: Substring) -> String {
        segment.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}
