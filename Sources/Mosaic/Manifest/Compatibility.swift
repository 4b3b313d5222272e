/// What a module needs from the host to run: host versions, platforms and host features.
///
/// The kernel checks it against the ``HostEnvironment`` before anything activates and refuses, with a
/// diagnostic, a module that cannot run here.
public struct Compatibility: Sendable, Hashable, Codable {
    /// The host application versions the module runs in.
    public var host: VersionRange
    /// The platforms the module runs on; empty means every platform.
    public var platforms: [PlatformRequirement]
    /// Features the host must offer, such as `location` or `notifications`.
    public var features: Set<String>

    /// No constraint at all.
    public static let any = Compatibility()

    /// Creates a descriptor; every part defaults to "no constraint".
    public init(host: VersionRange = .any, platforms: [PlatformRequirement] = [], features: Set<String> = []) {
        self.host = host
        self.platforms = platforms
        self.features = features
    }

    enum CodingKeys: String, CodingKey { case host, platforms, features }

    /// Decodes the value from its text form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decodeIfPresent(VersionRange.self, forKey: .host) ?? .any
        platforms = try container.decodeIfPresent([PlatformRequirement].self, forKey: .platforms) ?? []
        features = try container.decodeIfPresent(Set<String>.self, forKey: .features) ?? []
    }
}

/// A platform a module runs on, with the oldest and newest platform versions it supports.
public struct PlatformRequirement: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The platform.
    public var platform: Platform
    /// The oldest supported platform version, inclusive.
    public var minimum: SemanticVersion?
    /// The newest supported platform version, inclusive.
    public var maximum: SemanticVersion?

    /// Creates a requirement; omit a bound to leave that side open.
    public init(_ platform: Platform, minimum: SemanticVersion? = nil, maximum: SemanticVersion? = nil) {
        self.platform = platform
        self.minimum = minimum
        self.maximum = maximum
    }

    /// Whether `version` of this platform lies between the bounds.
    public func accepts(_ version: SemanticVersion) -> Bool {
        if let minimum, !(minimum <= version) { return false }
        if let maximum, !(version <= maximum) { return false }
        return true
    }

    /// The value as text, for messages and logs.
    public var description: String {
        switch (minimum, maximum) {
        case (nil, nil): platform.name
        case (let low?, nil): "\(platform) \(low) or later"
        case (nil, let high?): "\(platform) up to \(high)"
        case (let low?, let high?): "\(platform) \(low) to \(high)"
        }
    }

    enum CodingKeys: String, CodingKey {
        case platform = "name"
        case minimum = "min"
        case maximum = "max"
    }
}

/// An operating system family, named as `#if os(…)` names it.
public struct Platform: Sendable, Hashable, Codable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The platform's name, such as `linux` or `macOS`.
    public let name: String

    /// The platform named `name`.
    public init(_ name: String) { self.name = name }
    /// Creates a code from its text.
    public init(rawValue: String) { self.init(rawValue) }
    /// The platform's name, as Codable and `RawRepresentable` see it.
    public var rawValue: String { name }
    /// Creates the value from a string literal; an invalid one is reported by validation, never a trap.
    public init(stringLiteral value: String) { self.init(value) }

    /// The name; a long one is cut with its length stated, for messages.
    public var description: String { name.utf8.count <= 80 ? name : name.quotedForMessage() }

    /// Linux.
    public static let linux: Platform = "linux"
    /// macOS.
    public static let macOS: Platform = "macOS"
    /// iOS.
    public static let iOS: Platform = "iOS"
    /// tvOS.
    public static let tvOS: Platform = "tvOS"
    /// watchOS.
    public static let watchOS: Platform = "watchOS"
    /// visionOS.
    public static let visionOS: Platform = "visionOS"
    /// Windows.
    public static let windows: Platform = "windows"

    /// The platform this code was compiled for.
    public static var current: Platform {
        #if os(Linux)
            .linux
        #elseif os(macOS)
            .macOS
        #elseif os(iOS)
            .iOS
        #elseif os(tvOS)
            .tvOS
        #elseif os(watchOS)
            .watchOS
        #elseif os(visionOS)
            .visionOS
        #elseif os(Windows)
            .windows
        #else
            "unknown"
        #endif
    }
}
