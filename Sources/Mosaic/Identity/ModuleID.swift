/// A module's reverse-DNS identifier, such as `com.ghost.weather`.
///
/// Any string can be written as an identifier so that a manifest with a bad one can still be read and reported;
/// ``problems`` lists every rule the string breaks, and the kernel refuses to activate a module whose identifier
/// has any. The rules:
/// - at most ``maximumLength`` characters in all;
/// - at least two segments separated by `.`, none of them empty;
/// - each segment at most ``maximumSegmentLength`` characters, made of lowercase ASCII letters, digits and `-`;
/// - each segment starts with a letter and does not end with `-`.
///
/// Lowercase only, so that two identifiers that differ only in case can never name two different modules.
public struct ModuleID: Sendable, Hashable, Comparable, Codable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The identifier as written.
    public let rawValue: String
    /// The text's hash with ``isValid`` in its lowest bit, both computed once, when the identifier is made: tables
    /// keyed by identifiers then hash one number instead of the text, and the identifier still fits the three words
    /// of an existential's inline buffer (a task-local `ServiceContext` carries one without a box).
    private let hashAndValidity: Int

    /// Whether the identifier follows every rule; checked once, when the identifier is made.
    public var isValid: Bool { hashAndValidity & 1 == 1 }

    /// The longest identifier accepted, in characters.
    public static let maximumLength = 255
    /// The longest segment accepted, in characters (as for a DNS label).
    public static let maximumSegmentLength = 63

    /// Creates an identifier from any string; check ``isValid`` or ``problems`` before trusting it.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
        self.hashAndValidity = rawValue.hashValue & ~1 | (Self.followsRules(rawValue) ? 1 : 0)
    }

    /// Whether `lhs` and `rhs` are equal; identifiers with different hashes are told apart without comparing text.
    public static func == (lhs: ModuleID, rhs: ModuleID) -> Bool {
        lhs.hashAndValidity == rhs.hashAndValidity && lhs.rawValue == rhs.rawValue
    }

    /// Feeds the value's identity to `hasher`: the text's hash, computed once.
    public func hash(into hasher: inout Hasher) { hasher.combine(hashAndValidity) }

    /// Creates an identifier from any string; never fails (see ``isValid``). Codable uses this.
    public init(rawValue: String) {
        self.init(rawValue)
    }

    /// Creates the value from a string literal; an invalid one is reported by validation, never a trap.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The identifier as written; one too long to be valid is cut to 80 characters with its length stated, so that
    /// no message quoting it can grow with hostile input.
    public var description: String {
        rawValue.utf8.count <= Self.maximumLength ? rawValue : rawValue.quotedForMessage()
    }

    /// Whether `lhs` sorts before `rhs`.
    public static func < (lhs: ModuleID, rhs: ModuleID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `text` follows every rule: one pass over its bytes, without allocating.
    private static func followsRules(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else { return false }
        var segments = 1
        var segmentLength = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                guard segmentLength > 0, previous != UInt8(ascii: "-") else { return false }
                segments += 1
                segmentLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                if segmentLength == 0, !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) { return false }
                segmentLength += 1
                guard segmentLength <= Self.maximumSegmentLength else { return false }
            default:
                return false
            }
            previous = byte
        }
        return segments >= 2 && segmentLength > 0 && previous != UInt8(ascii: "-")
    }

    /// Every rule the identifier breaks, each as a sentence that says what to change; empty when valid.
    public var problems: [String] {
        if isValid { return [] }
        var problems: [String] = []
        let scalars = rawValue.unicodeScalars
        if scalars.isEmpty {
            return ["the identifier is empty; use reverse-DNS form such as 'com.example.feature'"]
        }
        if scalars.count > Self.maximumLength {
            problems.append("it is \(scalars.count) characters long; shorten it to at most \(Self.maximumLength)")
        }
        let segments = rawValue.split(separator: ".", omittingEmptySubsequences: false)
        if segments.count < 2 {
            problems.append("it has one segment; use at least two segments separated by '.', such as 'com.example'")
        }
        for (index, segment) in segments.enumerated() {
            problems += Self.problems(inSegment: segment, at: index + 1)
        }
        return problems
    }

    private static func problems(inSegment segment: Substring, at position: Int) -> [String] {
        let name = "segment \(position)"
        guard let first = segment.unicodeScalars.first, let last = segment.unicodeScalars.last else {
            return ["\(name) is empty; remove the extra '.'"]
        }
        var problems: [String] = []
        if segment.unicodeScalars.count > maximumSegmentLength {
            problems.append("\(name) is longer than \(maximumSegmentLength) characters; shorten it")
        }
        let disallowed = segment.unicodeScalars.filter { !isAllowed($0) }
        if !disallowed.isEmpty {
            let shown = disallowed.prefix(5).map { printable($0) }.joined(separator: ", ")
            problems.append("\(name) '\(segment.prefix(40))' contains \(shown); use only a-z, 0-9 and '-'")
        }
        if !("a"..."z").contains(first) {
            problems.append("\(name) '\(segment.prefix(40))' must start with a lowercase letter")
        }
        if last == "-" {
            problems.append("\(name) '\(segment.prefix(40))' must not end with '-'")
        }
        return problems
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
    }

    private static func printable(_ scalar: Unicode.Scalar) -> String {
        scalar.properties.generalCategory == .control || scalar == " "
            ? "U+\(String(scalar.value, radix: 16, uppercase: true))" : "'\(scalar)'"
    }
}
