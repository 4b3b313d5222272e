/// The versions of a module (or of the host) that a manifest accepts.
///
/// Written in code as a Swift range of versions (`"1.0.0"..<"2.0.0"`, `"1.0.0"..."1.9.0"`), with
/// ``from(_:)`` for "this version up to the next major", or ``any``. Written in a manifest file as the same text:
/// `"1.0.0..<2.0.0"`, `"1.0.0...1.9.0"`, `"^1.2.0"`, `">=1.2.0"` or `"*"`.
///
/// A pre-release version is accepted only when a bound of the range is itself a pre-release (as in SwiftPM and npm),
/// so `1.0.0..<2.0.0` does not accept `1.5.0-beta`.
public struct VersionRange: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Whether `lhs` and `rhs` are equal.
    public static func == (lhs: VersionRange, rhs: VersionRange) -> Bool {
        lhs.lowerBound == rhs.lowerBound && lhs.upperBound == rhs.upperBound
            && lhs.includesUpperBound == rhs.includesUpperBound
    }

    /// Feeds the value's identity to `hasher`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(lowerBound)
        hasher.combine(upperBound)
        hasher.combine(includesUpperBound)
    }

    /// The smallest accepted version, inclusive; `nil` when there is no lower bound.
    public let lowerBound: SemanticVersion?
    /// The upper bound; `nil` when there is none.
    public let upperBound: SemanticVersion?
    /// Whether ``upperBound`` itself is accepted.
    public let includesUpperBound: Bool
    /// What is wrong with the range and how to write it, or `nil` when it is well formed; found once, when the
    /// range is made.
    public let problem: String?
    /// Whether each bound is absent or a valid release (most ranges): ``contains(_:)`` then compares plain numbers.
    @inlinable
    var boundsAreReleases: Bool {
        (lowerBound?.kind ?? .release) == .release && (upperBound?.kind ?? .release) == .release
    }

    /// Every version.
    public static let any = VersionRange(lowerBound: nil, upperBound: nil, includesUpperBound: false)

    fileprivate init(lowerBound: SemanticVersion?, upperBound: SemanticVersion?, includesUpperBound: Bool) {
        self.lowerBound = lowerBound
        self.upperBound = upperBound
        self.includesUpperBound = includesUpperBound
        self.problem = Self.problem(lowerBound, upperBound, includesUpperBound)
    }

    /// `version` or any later version.
    public static func atLeast(_ version: SemanticVersion) -> VersionRange {
        VersionRange(lowerBound: version, upperBound: nil, includesUpperBound: false)
    }

    /// `version` up to, not including, the next major version (SwiftPM's `from:`, npm's `^`).
    /// When `version` is invalid the range has its ``problem``; when its major is `Int.max` there is no higher
    /// major, and the range is every later version.
    public static func from(_ version: SemanticVersion) -> VersionRange {
        guard version.isValid else {
            return VersionRange(lowerBound: version, upperBound: version, includesUpperBound: false)
        }
        return VersionRange(lowerBound: version, upperBound: version.nextMajor, includesUpperBound: false)
    }

    /// Whether the range accepts `version`; an invalid version is never accepted.
    ///
    /// A pre-release is accepted only when a bound is a pre-release, and never one of a release upper bound's own
    /// version (`2.0.0-alpha` is not in `1.0.0-rc.1..<2.0.0`), as in SwiftPM.
    @inlinable
    public func contains(_ version: SemanticVersion) -> Bool {
        // A release against release bounds, the common case, compares plain numbers in the caller: validating a
        // large graph calls this per dependency, and a call or reading the parsed parts copied the range and the
        // version (retaining their texts and lists).
        if boundsAreReleases, version.kind == .release {
            let candidate = version.numbers
            if let lower = lowerBound?.numbers, candidate < lower { return false }
            guard let upper = upperBound?.numbers else { return true }
            return includesUpperBound ? candidate <= upper : candidate < upper
        }
        return containsComparingParts(version)
    }

    /// ``contains(_:)`` for pre-releases, invalid versions and bounds: compared as parsed parts, each bound read once.
    @usableFromInline
    func containsComparingParts(_ version: SemanticVersion) -> Bool {
        guard let candidate = version.components else { return false }
        var lowerParts: SemanticVersion.Components?
        if let lowerBound {
            guard let parts = lowerBound.components else { return false }
            lowerParts = parts
        }
        var upperParts: SemanticVersion.Components?
        if let upperBound {
            guard let parts = upperBound.components else { return false }
            upperParts = parts
        }
        if !candidate.prerelease.isEmpty {
            guard lowerParts?.prerelease.isEmpty == false || upperParts?.prerelease.isEmpty == false else {
                return false
            }
            if let upperParts, !includesUpperBound, upperParts.prerelease.isEmpty,
                (candidate.major, candidate.minor, candidate.patch)
                    == (upperParts.major, upperParts.minor, upperParts.patch)
            {
                return false
            }
        }
        if let lowerParts, candidate.precedes(lowerParts) { return false }
        guard let upperParts else { return true }
        return includesUpperBound ? !upperParts.precedes(candidate) : candidate.precedes(upperParts)
    }

    private static func problem(_ lower: SemanticVersion?, _ upper: SemanticVersion?, _ closed: Bool) -> String? {
        func shown() -> String { VersionRange.describe(lower, upper, closed).quotedForMessage(limit: 120) }
        if let problem = lower?.problem ?? upper?.problem {
            return "range \(shown()): \(problem)"
        }
        if let lower, let upper, closed ? lower > upper : lower >= upper {
            return "range \(shown()) is empty; its lower bound must be below its upper bound"
        }
        return nil
    }

    /// The value as text, for messages and logs.
    public var description: String { Self.describe(lowerBound, upperBound, includesUpperBound) }

    private static func describe(_ lower: SemanticVersion?, _ upper: SemanticVersion?, _ closed: Bool) -> String {
        switch (lower, upper) {
        case (nil, nil): "*"
        case (let lower?, nil): ">=\(lower)"
        case (let lower?, let upper?): "\(lower)\(closed ? "..." : "..<")\(upper)"
        case (nil, let upper?): "..<\(upper)"
        }
    }

    /// Reads the text form used in manifest files; `nil` when the text has none of the accepted shapes.
    public init?(parsing text: String) {
        let text = text.trimmingWhitespace()
        if text == "*" || text.isEmpty {
            self = .any
        } else if text.hasPrefix("^") {
            self = .from(SemanticVersion(String(text.dropFirst()).trimmingWhitespace()))
        } else if text.hasPrefix(">=") {
            self = .atLeast(SemanticVersion(String(text.dropFirst(2)).trimmingWhitespace()))
        } else if let parts = text.split(around: "..<") {
            self.init(
                lowerBound: SemanticVersion(parts.0), upperBound: SemanticVersion(parts.1), includesUpperBound: false)
        } else if let parts = text.split(around: "...") {
            self.init(
                lowerBound: SemanticVersion(parts.0), upperBound: SemanticVersion(parts.1), includesUpperBound: true)
        } else {
            return nil
        }
    }

    /// The accepted text shapes, for error messages.
    public static let acceptedForms = "'1.0.0..<2.0.0', '1.0.0...1.9.0', '^1.2.0', '>=1.2.0' or '*'"

    /// Decodes the value from its text form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let range = VersionRange(parsing: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "\(text.quotedForMessage()) is not a version range; write \(Self.acceptedForms)")
        }
        self = range
    }

    /// Encodes the value in its text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// The text before and after the first `separator`, each trimmed; `nil` when absent.
    func split(around separator: String) -> (String, String)? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(separator) {
                let after = self.index(index, offsetBy: separator.count)
                return (String(self[..<index]).trimmingWhitespace(), String(self[after...]).trimmingWhitespace())
            }
            index = self.index(after: index)
        }
        return nil
    }
}

extension SemanticVersion {
    /// `lower..<upper` as written in code (`"1.0.0"..<"2.0.0"`): unlike a Swift `Range`, a malformed or reversed
    /// pair is not a trap but a range with its ``problem``, which validation reports.
    public static func ..< (lower: SemanticVersion, upper: SemanticVersion) -> VersionRange {
        VersionRange(lowerBound: lower, upperBound: upper, includesUpperBound: false)
    }

    /// `lower...upper` as written in code (`"1.0.0"..."1.9.0"`), with its ``problem`` instead of a trap.
    public static func ... (lower: SemanticVersion, upper: SemanticVersion) -> VersionRange {
        VersionRange(lowerBound: lower, upperBound: upper, includesUpperBound: true)
    }
}
