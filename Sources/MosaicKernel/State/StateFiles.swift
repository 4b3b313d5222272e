internal import Dispatch
internal import Foundation
internal import Mosaic

/// JSON files of persisted state keys, one per key, each replaced atomically (written aside, then renamed over the
/// old one) so that a crash in the middle of a write leaves the old value or the new one.
///
/// A value saved at version 1 is the value's JSON alone, as files were before keys had versions (so those files
/// read as version 1, and version-1 files stay readable by older apps). A later version is saved in an envelope,
/// `{"mosaic-state-version":2,"value":…}`. A parked file is renamed `<file>.unreadable-<seconds>` beside it.
///
/// File calls block, so they run on a dispatch queue of their own, never on a thread of the cooperative pool.
struct StateFiles: StatePersister {
    let directory: String

    /// Where every instance's file calls run: one at a time, which suits a few small files.
    private static let queue = DispatchQueue(label: "mosaic.state-files")

    /// `body`'s result, computed on ``queue``.
    private static func off<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: body)) }
        }
    }

    func url(for id: String) -> URL {
        URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName(for: id))
    }

    func load(_ id: String) async throws -> SavedState? {
        try await Self.off { [self] in try loadNow(id) }
    }

    func save(_ data: Data, version: Int, for id: String) async throws {
        try await Self.off { [self] in try saveNow(data, version: version, for: id) }
    }

    func park(_ id: String, reason: String) async throws -> String {
        try await Self.off { [self] in try parkNow(id) }
    }

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

    func saveNow(_ data: Data, version: Int, for id: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try (version == 1 ? data : StateEnvelope.seal(data, version: version))
                .write(to: url(for: id), options: .atomic)
        } catch {
            throw StateError(
                .unavailable, "\(id) could not be saved in \(directory): \(error). Its value is unchanged.")
        }
    }

    private func parkNow(_ id: String) throws -> String {
        let file = url(for: id)
        let stamp = "unreadable-\(Int(Date().timeIntervalSince1970))"
        var aside = file.appendingPathExtension(stamp)
        var attempt = 1
        while FileManager.default.fileExists(atPath: aside.path) {
            attempt += 1
            aside = file.appendingPathExtension("\(stamp)-\(attempt)")
        }
        do {
            try FileManager.default.moveItem(at: file, to: aside)
        } catch {
            throw StateError(.unavailable, "\(file.path) could not be moved aside to \(aside.path): \(error).")
        }
        return "the file was kept as \(aside.path)"
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
