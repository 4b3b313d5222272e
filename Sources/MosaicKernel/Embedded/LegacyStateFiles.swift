internal import Foundation
internal import Mosaic

/// The JSON files of `.jsonFile` keys that releases before the embedded outbox kept, one per key: read once into
/// the state database, then renamed `<file>.imported` beside it (kept, never deleted).
///
/// A value saved at version 1 is the value's JSON alone; a later version is in an envelope,
/// `{"mosaic-state-version":2,"value":…}`. Every call blocks, so the storage makes them on its database's queue,
/// never on a thread of the cooperative pool.
struct LegacyStateFiles {
    let directory: String

    func url(for id: String) -> URL {
        URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName(for: id))
    }

    /// Whether an earlier release left a file for `id`.
    func exists(_ id: String) -> Bool {
        FileManager.default.fileExists(atPath: url(for: id).path)
    }

    /// The value in `id`'s file, or `nil` when there is none.
    func loadNow(_ id: String) throws -> SavedState? {
        let file = url(for: id)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw StateError(.unavailable, "\(file.path) could not be read: \(error). Check its permissions.")
        }
        return StateEnvelope.open(data) ?? SavedState(data: data, version: 1)
    }

    /// Renames `id`'s file once its value is in the database, so that it is read only once.
    func retire(_ id: String) throws {
        let file = url(for: id)
        let aside = file.appendingPathExtension("imported")
        try? FileManager.default.removeItem(at: aside)
        try FileManager.default.moveItem(at: file, to: aside)
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

/// The envelope a file keeps a value of version 2 or later in: `{"mosaic-state-version":N,"value":…}`, the value's
/// JSON copied byte for byte, so reading it back never re-encodes (and never changes) the value.
enum StateEnvelope {
    static let versionKey = "mosaic-state-version"

    static func seal(_ value: Data, version: Int) -> Data {
        Data("{\"\(versionKey)\":\(version),\"value\":".utf8) + value + Data("}".utf8)
    }

    /// The value and version in `data` when it is an envelope (whitespace allowed between its tokens, its two keys
    /// in this order); `nil` for anything else, which is a plain version-1 value.
    static func open(_ data: Data) -> SavedState? {
        let bytes = [UInt8](data)
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        func expect(_ text: String) -> Bool {
            skipSpace()
            let expected = Array(text.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected
            else { return false }
            index += expected.count
            return true
        }
        guard expect("{"), expect("\"\(versionKey)\""), expect(":") else { return nil }
        skipSpace()
        let digits = bytes[index...].prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, digits.count < 10, let version = Int(String(decoding: digits, as: UTF8.self)) else {
            return nil
        }
        index += digits.count
        guard expect(","), expect("\"value\""), expect(":") else { return nil }
        skipSpace()
        var end = bytes.count
        func trimSpace() {
            while end > index, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        }
        trimSpace()
        guard end > index, bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        end -= 1
        trimSpace()
        guard end > index else { return nil }
        return SavedState(data: Data(bytes[index..<end]), version: version)
    }
}
