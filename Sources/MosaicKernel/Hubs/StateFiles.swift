internal import Foundation
internal import Mosaic

/// Where persisted state keys are kept.
protocol StatePersister: Sendable {
    /// The saved value, `nil` when nothing was saved, or why the saved data cannot be used.
    func load<Value: Decodable>(_ type: Value.Type, for id: String) -> (value: Value?, problem: Diagnostic?)
    func save<Value: Encodable>(_ value: Value, for id: String) throws
}

/// JSON files of persisted state keys, one per key, each replaced atomically (written aside, then renamed over the
/// old one) so that a crash in the middle of a write leaves the old value or the new one.
struct StateFiles: StatePersister {
    let directory: String

    func url(for id: String) -> URL {
        URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName(for: id))
    }

    /// The saved value, `nil` when nothing was saved, or a diagnostic when the file cannot be read as `Value`; an
    /// unreadable file is moved aside (never overwritten) and named in the diagnostic.
    func load<Value: Decodable>(_ type: Value.Type, for id: String) -> (value: Value?, problem: Diagnostic?) {
        let file = url(for: id)
        guard let data = FileManager.default.contents(atPath: file.path) else { return (nil, nil) }
        do {
            return (try JSONDecoder().decode(Value.self, from: data), nil)
        } catch {
            let aside = file.appendingPathExtension("unreadable-\(Int(Date().timeIntervalSince1970))")
            let moved = (try? FileManager.default.moveItem(at: file, to: aside)) != nil
            return (
                nil,
                Diagnostic(
                    .statePersistence, .error, modules: [],
                    message: "The saved value of \(id) cannot be read as \(Value.self) (\(error)); the initial value "
                        + "is used. "
                        + (moved ? "The file was kept as \(aside.path)." : "The file was left at \(file.path)."),
                    fix: "Restore the file from the kept copy if the data matters, or delete the copy.")
            )
        }
    }

    func save<Value: Encodable>(_ value: Value, for id: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(value).write(to: url(for: id), options: .atomic)
        } catch {
            throw StateError("\(id) could not be saved in \(directory): \(error). Its value is unchanged.")
        }
    }

    /// A file name for a key: its identifier with anything but letters, digits, `.`, `-` and `_` escaped.
    static func fileName(for id: String) -> String {
        var name = ""
        for scalar in id.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_": name.unicodeScalars.append(scalar)
            default: name += "%" + String(scalar.value, radix: 16)
            }
        }
        return (name.hasPrefix(".") ? "%2e" + name.dropFirst() : name) + ".json"
    }
}
