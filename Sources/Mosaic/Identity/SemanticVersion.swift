/// A semantic version (semver 2.0.0) such as `1.4.0` or `2.0.0-beta.2+exp.sha.5114f85`.
///
/// Parsed strictly against semver 2.0.0's grammar, byte by byte, with arithmetic that cannot overflow: no leading
/// zeros, no empty or malformed identifiers, numbers no larger than `Int.max`, at most ``maximumLength`` bytes.
/// The text is kept as written, so that a manifest with a bad version can still be read and the kernel can say
/// exactly what is wrong with it. Nothing about any input can make parsing or comparing trap.
///
/// Ordering follows semver precedence: `1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-beta < 1.0.0`; build metadata is
/// ignored. An invalid version sorts before every valid one.
public struct SemanticVersion: Sendable, Hashable, Comparable, Codable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The parts of a valid version.
    public struct Components: Sendable, Hashable {
        /// The major version: incompatible changes.
        public let major: Int
        /// The minor version: compatible additions.
        public let minor: Int
        /// The patch version: compatible fixes.
        public let patch: Int
        /// The pre-release identifiers (`["beta", "2"]` for `-beta.2`); empty for a release.
        public let prerelease: [String]
        /// The build metadata identifiers; they never change precedence.
        public let build: [String]
    }

    /// The version as written.
    public let text: String
    /// Major, minor and patch, when ``kind`` is not `.invalid` (zeros otherwise).
    @usableFromInline let numbers: (major: Int, minor: Int, patch: Int)
    /// The pre-release and build identifiers, when the version has any. One reference instead of two lists keeps a
    /// version to seven words: a catalog holds thousands, in every manifest and dependency range that validation
    /// walks.
    private let labels: Labels?
    /// Whether the text is a valid release, a valid pre-release, or invalid.
    @usableFromInline let kind: Kind

    /// A byte rather than an enum: an enum's spare values would hold `Optional`'s tag, and copying a range's
    /// optional bounds then went through the runtime's generic value witnesses.
    @usableFromInline
    struct Kind: Equatable, Sendable {
        @usableFromInline let raw: UInt8
        @inlinable static var invalid: Kind { Kind(raw: 0) }
        @inlinable static var release: Kind { Kind(raw: 1) }
        @inlinable static var prerelease: Kind { Kind(raw: 2) }
        @inlinable init(raw: UInt8) { self.raw = raw }
    }

    /// The identifiers after the numbers.
    private final class Labels: Sendable {
        let prerelease: [String]
        let build: [String]

        init(prerelease: [String], build: [String]) {
            self.prerelease = prerelease
            self.build = build
        }
    }

    /// The parsed parts, or `nil` when ``text`` is not a valid semantic version.
    public var components: Components? {
        guard kind != .invalid else { return nil }
        return Components(
            major: numbers.major, minor: numbers.minor, patch: numbers.patch, prerelease: labels?.prerelease ?? [],
            build: labels?.build ?? [])
    }

    /// The longest version text accepted, in UTF-8 bytes.
    public static let maximumLength = 256

    /// Parses `text` strictly; an invalid version keeps its text and has a ``problem``.
    public init(_ text: String) {
        self.text = text
        guard let components = Self.parse(text) else {
            (numbers, labels, kind) = ((0, 0, 0), nil, .invalid)
            return
        }
        numbers = (components.major, components.minor, components.patch)
        labels =
            components.prerelease.isEmpty && components.build.isEmpty
            ? nil : Labels(prerelease: components.prerelease, build: components.build)
        kind = components.prerelease.isEmpty ? .release : .prerelease
    }

    /// Creates `major.minor.patch`; negative numbers make an invalid version.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.init("\(major).\(minor).\(patch)")
    }

    /// Parses `rawValue` strictly; never fails (see ``isValid``). Codable uses this.
    public init(rawValue: String) {
        self.init(rawValue)
    }

    /// The version as written, as Codable and `RawRepresentable` see it.
    public var rawValue: String { text }

    /// Creates the value from a string literal; an invalid one is reported by validation, never a trap.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The version as written; a text too long to be valid is cut with its length stated, for messages.
    public var description: String {
        text.utf8.count <= Self.maximumLength ? text : text.quotedForMessage()
    }

    /// Whether ``text`` is a valid semantic version.
    public var isValid: Bool { kind != .invalid }

    /// Whether this is a pre-release (`1.0.0-beta`).
    public var isPrerelease: Bool { kind == .prerelease }

    /// What is wrong with the text and how to write it, or `nil` when it is valid.
    public var problem: String? {
        guard kind == .invalid else { return nil }
        return "\(text.quotedForMessage()) is not a semantic version; write MAJOR.MINOR.PATCH with an optional "
            + "-prerelease and +build, such as '1.4.0' or '2.0.0-beta.1', without leading zeros, numbers at most "
            + "\(Int.max) and at most \(Self.maximumLength) bytes in all"
    }

    /// Whether `lhs` and `rhs` are equal.
    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        if let left = lhs.components {
            guard let right = rhs.components else { return false }
            return (left.major, left.minor, left.patch) == (right.major, right.minor, right.patch)
                && left.prerelease == right.prerelease
        }
        return rhs.components == nil && lhs.text == rhs.text
    }

    /// Feeds the value's identity to `hasher`.
    public func hash(into hasher: inout Hasher) {
        if let components {
            hasher.combine(components.major)
            hasher.combine(components.minor)
            hasher.combine(components.patch)
            hasher.combine(components.prerelease)
        } else {
            hasher.combine(text)
        }
    }

    /// Whether `lhs` sorts before `rhs`.
    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        // Bound one at a time rather than switched on as a pair: a tuple of two optional versions is destroyed
        // through the runtime's generic code, which was a tenth of validating a large graph.
        if let left = lhs.components {
            guard let right = rhs.components else { return false }
            return left.precedes(right)
        }
        return rhs.components == nil ? lhs.text < rhs.text : true
    }

    /// The next major version with no pre-release: the exclusive upper bound of a "same major" range; `nil` when
    /// the version is invalid or its major version is already `Int.max`.
    public var nextMajor: SemanticVersion? {
        guard let components else { return nil }
        let (next, overflow) = components.major.addingReportingOverflow(1)
        return overflow ? nil : SemanticVersion(next, 0, 0)
    }
}

extension SemanticVersion.Components {
    /// Semver 2.0.0 §11: numbers numerically, then a release above its pre-releases, then identifier by identifier.
    func precedes(_ other: Self) -> Bool {
        if (major, minor, patch) != (other.major, other.minor, other.patch) {
            return (major, minor, patch) < (other.major, other.minor, other.patch)
        }
        switch (prerelease.isEmpty, other.prerelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        case (false, false): break
        }
        for (left, right) in zip(prerelease, other.prerelease) where left != right {
            return Self.identifier(left, precedes: right)
        }
        return prerelease.count < other.prerelease.count
    }

    /// Numeric identifiers compare by value (by length first: they have no leading zeros, and may exceed `Int`),
    /// and sort below alphanumeric ones, which compare in ASCII order.
    private static func identifier(_ left: String, precedes right: String) -> Bool {
        switch (left.utf8.allSatisfy(isDigit), right.utf8.allSatisfy(isDigit)) {
        case (true, true):
            return left.utf8.count != right.utf8.count
                ? left.utf8.count < right.utf8.count : left.utf8.lexicographicallyPrecedes(right.utf8)
        case (true, false): return true
        case (false, true): return false
        case (false, false): return left.utf8.lexicographicallyPrecedes(right.utf8)
        }
    }
}

extension SemanticVersion {
    /// Semver 2.0.0's grammar: `core ["-" pre-release] ["+" build]`, checked byte by byte before any value is made.
    private static func parse(_ text: String) -> Components? {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength else { return nil }
        let plus = bytes.firstIndex(of: UInt8(ascii: "+"))
        let beforeBuild = bytes[..<(plus ?? bytes.endIndex)]
        let hyphen = beforeBuild.firstIndex(of: UInt8(ascii: "-"))
        let core = beforeBuild[..<(hyphen ?? beforeBuild.endIndex)].split(
            separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard core.count == 3, let major = number(core[0]), let minor = number(core[1]), let patch = number(core[2])
        else { return nil }
        var prerelease: [String] = []
        if let hyphen {
            guard let identifiers = identifiers(beforeBuild[(hyphen + 1)...], numericMayHaveLeadingZero: false)
            else { return nil }
            prerelease = identifiers
        }
        var build: [String] = []
        if let plus {
            guard let identifiers = identifiers(bytes[(plus + 1)...], numericMayHaveLeadingZero: true)
            else { return nil }
            build = identifiers
        }
        return Components(major: major, minor: minor, patch: patch, prerelease: prerelease, build: build)
    }

    /// A numeric identifier without leading zeros that fits in `Int`.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard let first = digits.first, digits.allSatisfy(isDigit), first != UInt8(ascii: "0") || digits.count == 1
        else { return nil }
        var value = 0
        for digit in digits {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// Dot-separated, non-empty identifiers of `[0-9A-Za-z-]`.
    private static func identifiers(_ bytes: ArraySlice<UInt8>, numericMayHaveLeadingZero: Bool) -> [String]? {
        var identifiers: [String] = []
        for part in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard let first = part.first, part.allSatisfy(isIdentifierByte) else { return nil }
            if !numericMayHaveLeadingZero, part.allSatisfy(isDigit), first == UInt8(ascii: "0"), part.count > 1 {
                return nil
            }
            identifiers.append(String(decoding: part, as: UTF8.self))
        }
        return identifiers
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "-")
    }
}

private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
