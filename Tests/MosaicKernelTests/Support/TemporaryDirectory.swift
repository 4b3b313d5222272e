import Foundation

/// A fresh directory holding `files` (name → contents); the caller removes it.
func temporaryDirectory(with files: [String: String]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    for (name, contents) in files {
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent(name))
    }
    return path
}
