public import Version

/// A semantic version (semver 2.0.0) such as `1.4.0` or `2.0.0-beta.2+exp.sha.5114f85`.
///
/// Parsing and ordering come from mxcl/Version; this type adds strictness (no leading zeros, no empty or
/// malformed identifiers, nothing tolerated) and keeps the text as written, so that a manifest with a bad version
/// can still be read, and the kernel can say exactly what is wrong with it.
///
/// Ordering follows semver precedence: `1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-beta < 1.0.0`; build metadata is
/// ignored. An invalid version sorts before every valid one.
public struct SemanticVersion: Sendable, Hashable, Comparable, Codable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The version as written.
    public let text: String
    /// The parsed version, or `nil` when ``text`` is not a valid semantic version.
    public let value: Version?

    /// Parses `text` strictly; an invalid version keeps its text and has a ``problem``.
    public init(_ text: String) {
        self.text = text
        self.value = Self.parse(text)
    }

    /// Wraps a parsed version.
    public init(_ version: Version) {
        self.text = version.description
        self.value = version
    }

    /// Creates `major.minor.patch`.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.init(Version(major, minor, patch))
    }

    /// Parses `rawValue` strictly; never fails (see ``isValid``). Codable uses this.
    public init(rawValue: String) {
        self.init(rawValue)
    }

    /// The version as written, as Codable and `RawRepresentable` see it.
    public var rawValue: String { text }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public var description: String { text }

    /// Whether ``text`` is a valid semantic version.
    public var isValid: Bool { value != nil }

    /// What is wrong with the text and how to write it, or `nil` when it is valid.
    public var problem: String? {
        guard value == nil else { return nil }
        return "'\(text.prefix(80))' is not a semantic version; write MAJOR.MINOR.PATCH with an optional "
            + "-prerelease and +build, such as '1.4.0' or '2.0.0-beta.1', without leading zeros"
    }

    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        switch (lhs.value, rhs.value) {
        case (let left?, let right?): left == right
        case (nil, nil): lhs.text == rhs.text
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        if let value { hasher.combine(value) } else { hasher.combine(text) }
    }

    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        switch (lhs.value, rhs.value) {
        case (let left?, let right?):
            // The common case without building arrays; pre-releases go to mxcl/Version's full precedence rules.
            if (left.major, left.minor, left.patch) != (right.major, right.minor, right.patch) {
                return (left.major, left.minor, left.patch) < (right.major, right.minor, right.patch)
            }
            return left.prereleaseIdentifiers.isEmpty && right.prereleaseIdentifiers.isEmpty ? false : left < right
        case (nil, nil): return lhs.text < rhs.text
        case (nil, _?): return true
        case (_?, nil): return false
        }
    }

    /// The next major version with no pre-release: the exclusive upper bound of a "same major" range.
    public var nextMajor: SemanticVersion? {
        value.map { SemanticVersion($0.major + 1, 0, 0) }
    }

    /// Strict semver: mxcl/Version parses, then the text must read back unchanged and every identifier must be
    /// well formed (the parser itself tolerates leading zeros, signs and empty identifiers).
    private static func parse(_ text: String) -> Version? {
        guard text.utf8.count <= 256, let version = Version(text), version.description == text else { return nil }
        let identifiersWellFormed =
            version.prereleaseIdentifiers.allSatisfy { isIdentifier($0, numericMayHaveLeadingZero: false) }
            && version.buildMetadataIdentifiers.allSatisfy { isIdentifier($0, numericMayHaveLeadingZero: true) }
        return identifiersWellFormed ? version : nil
    }

    private static func isIdentifier(_ identifier: String, numericMayHaveLeadingZero: Bool) -> Bool {
        let scalars = identifier.unicodeScalars
        guard !scalars.isEmpty,
            scalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
            })
        else { return false }
        let isNumeric = scalars.allSatisfy { ("0"..."9").contains($0) }
        return !isNumeric || numericMayHaveLeadingZero || scalars.count == 1 || scalars.first != "0"
    }
}
