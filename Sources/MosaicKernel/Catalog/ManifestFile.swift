internal import Foundation
internal import Mosaic

/// A module manifest as written in a JSON file: a ``Manifest`` plus the entry point that makes the module.
///
/// ```json
/// {
///   "id": "com.ghost.weather", "version": "1.4.0", "entryPoint": "WeatherModule",
///   "entitlements": ["weather"],
///   "dependencies": [{ "id": "com.ghost.location", "versions": "1.0.0..<2.0.0" }],
///   "compatibility": { "host": "^2.0.0", "platforms": [{ "name": "linux", "min": "5.0.0" }], "features": [] }
/// }
/// ```
struct ManifestFile: Decodable {
    var manifest: Manifest
    var entryPoint: String

    enum CodingKeys: String, CodingKey { case entryPoint }

    init(from decoder: any Decoder) throws {
        manifest = try Manifest(from: decoder)
        entryPoint = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .entryPoint)
    }

    /// The keys a manifest file may have, by the key path of the object that holds them.
    static let knownKeys: [String: Set<String>] = [
        "": ["id", "version", "entryPoint", "dependencies", "entitlements", "compatibility", "isolation"],
        "dependencies[]": ["id", "versions", "optional"],
        "compatibility": ["host", "platforms", "features"],
        "compatibility.platforms[]": ["name", "min", "max"],
    ]

    /// Files larger than this are refused unread: a manifest is a few hundred bytes.
    static let maximumSize = 1 << 20

    /// Reads and checks one file. Returns the manifest when the file is usable, and every problem found.
    static func read(at path: String) -> (file: ManifestFile?, diagnostics: [Diagnostic]) {
        func problem(_ message: String, fix: String, line: Int? = nil, column: Int? = nil, keyPath: String? = nil)
            -> Diagnostic
        {
            Diagnostic(
                .manifestMalformed, .error, modules: [], message: message, fix: fix,
                location: .init(file: path, line: line, column: column, keyPath: keyPath))
        }
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if attributes[.type] as? FileAttributeType == .typeDirectory {
                return (
                    nil,
                    [
                        problem(
                            "this is a directory, not a manifest file.",
                            fix: "Rename the directory so that its name does not end in .json, or move it elsewhere.")
                    ]
                )
            }
            if let size = attributes[.size] as? Int, size > maximumSize {
                return (
                    nil,
                    [
                        problem(
                            "the file is \(size) bytes; a manifest may be at most \(maximumSize).",
                            fix: "Point the kernel at a directory of manifest files only, or shrink this one.")
                    ]
                )
            }
            if let size = attributes[.size] as? Int, size == 0 {
                // Not read at all: Foundation's read of an empty file leaks a buffer each time.
                return (
                    nil,
                    [
                        problem(
                            "the file is empty.",
                            fix: "Write the manifest as one JSON object with at least 'id', 'version' and 'entryPoint'."
                        )
                    ]
                )
            }
            // Read at most one byte past the limit: the size above is the link's, not what it points to (a symlink
            // to /dev/zero), and a file may grow after it was measured.
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: maximumSize + 1) ?? Data()
            guard data.count <= maximumSize else {
                return (
                    nil,
                    [
                        problem(
                            "the file holds more than \(maximumSize) bytes; a manifest may be at most \(maximumSize).",
                            fix: "Point the kernel at a directory of manifest files only, or shrink this one.")
                    ]
                )
            }
        } catch {
            return (
                nil,
                [
                    problem(
                        "the file could not be read (\(error.localizedDescription)).",
                        fix: "Check that the file exists and that this process may read it.")
                ]
            )
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            let position = JSONPosition(of: error, in: data)
            return (
                nil,
                [
                    problem(
                        "the file is not valid JSON (\(position.explanation)).",
                        fix: "Correct the JSON at line \(position.line), column \(position.column).",
                        line: position.line, column: position.column)
                ]
            )
        }
        guard object is [String: Any] else {
            return (
                nil,
                [
                    problem(
                        "the file holds a JSON \(jsonKind(object)), not an object.",
                        fix: "Write the manifest as one JSON object with at least 'id', 'version' and 'entryPoint'.")
                ]
            )
        }
        let warnings = unknownKeys(in: object, path: path)
        do {
            return (try JSONDecoder().decode(ManifestFile.self, from: data), warnings)
        } catch let error as DecodingError {
            let (message, keyPath) = explain(error)
            return (nil, warnings + [problem(message, fix: "Correct the value at \(keyPath).", keyPath: keyPath)])
        } catch {
            return (
                nil,
                warnings + [
                    problem(
                        "the file could not be decoded (\(error)).",
                        fix: "Compare the file with the manifest format in the documentation.")
                ]
            )
        }
    }

    private static func jsonKind(_ value: Any) -> String {
        switch value {
        case is [Any]: "array"
        case is String: "string"
        case is NSNumber: "number"
        default: "null"
        }
    }

    /// A warning for each key Mosaic does not know, with the known key it most resembles.
    private static func unknownKeys(in value: Any, at keyPath: String = "", schemaPath: String = "", path: String)
        -> [Diagnostic]
    {
        if let array = value as? [Any] {
            return array.enumerated().flatMap { index, element in
                unknownKeys(in: element, at: "\(keyPath)[\(index)]", schemaPath: schemaPath + "[]", path: path)
            }
        }
        guard let object = value as? [String: Any], let known = knownKeys[schemaPath] else { return [] }
        return object.keys.sorted().flatMap { key -> [Diagnostic] in
            let childPath = keyPath.isEmpty ? key : "\(keyPath).\(key)"
            guard known.contains(key) else {
                let suggestion = known.min { editDistance(key, $0) < editDistance(key, $1) }
                let fix = suggestion.map { "Rename it to '\($0)' if that was meant, or remove it." } ?? "Remove it."
                return [
                    Diagnostic(
                        .manifestUnknownKey, .warning, modules: [],
                        message: "the key '\(key.prefix(80))' is not part of a module manifest and is ignored.",
                        fix: fix, location: .init(file: path, keyPath: childPath))
                ]
            }
            let childSchema = schemaPath.isEmpty ? key : "\(schemaPath).\(key)"
            return unknownKeys(in: object[key] as Any, at: childPath, schemaPath: childSchema, path: path)
        }
    }

    /// A sentence and a key path for a decoding error.
    private static func explain(_ error: DecodingError) -> (String, String) {
        func keyPath(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (last.map { [$0] } ?? [])
            let path = keys.reduce("") { path, key in
                if let index = key.intValue { return "\(path)[\(index)]" }
                return path.isEmpty ? key.stringValue : "\(path).\(key.stringValue)"
            }
            return path.isEmpty ? "the top level" : path
        }
        switch error {
        case .keyNotFound(let key, let context):
            let path = keyPath(context.codingPath, key)
            return ("the required key '\(key.stringValue)' is missing at \(keyPath(context.codingPath)).", path)
        case .typeMismatch(let type, let context):
            return (
                "the value at \(keyPath(context.codingPath)) should be \(describe(type)).",
                keyPath(context.codingPath)
            )
        case .valueNotFound(let type, let context):
            return (
                "the value at \(keyPath(context.codingPath)) is null; it should be \(describe(type)).",
                keyPath(context.codingPath)
            )
        case .dataCorrupted(let context):
            return (
                "the value at \(keyPath(context.codingPath)) is invalid: \(context.debugDescription)",
                keyPath(context.codingPath)
            )
        @unknown default:
            return ("the file does not have the shape of a manifest (\(error)).", "the top level")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is [Any].Type: "an array"
        default: "a \(String(describing: type).lowercased())"
        }
    }
}

/// The line and column of a JSON syntax error, read from the parser's "around character N" message.
struct JSONPosition {
    var line: Int
    var column: Int
    var explanation: String

    init(of error: any Error, in data: Data) {
        let text = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? "\(error)"
        explanation = text.hasSuffix(".") ? String(text.dropLast()) : text
        var offset = data.count
        if let range = text.range(of: "character "),
            let number = Int(text[range.upperBound...].prefix(while: \.isNumber))
        {
            offset = min(number, data.count)
        }
        let before = data.prefix(offset)
        line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? before.startIndex
        column = offset - (lineStart - before.startIndex) + 1
    }
}

/// The number of single-character edits that turn `a` into `b`: how close a mistyped key is to a known one.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.prefix(64))
    let b = Array(b)
    var previous = Array(0...b.count)
    for (i, left) in a.enumerated() {
        var current = [i + 1] + Array(repeating: 0, count: b.count)
        for (j, right) in b.enumerated() {
            current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
