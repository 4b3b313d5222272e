/// A module's need for another module, by identifier and accepted versions.
///
/// A required dependency must be present, in range and active before the dependent activates; if it fails or is
/// deactivated, the dependent is blocked. An optional dependency only orders activation when present: the
/// dependent activates after it, and without it.
public struct Dependency: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The module depended on.
    public var id: ModuleID
    /// The versions of it that are accepted.
    public var versions: VersionRange
    /// Whether the dependent can run without it.
    public var isOptional: Bool

    /// Creates a dependency; prefer the static builders ``module(_:_:optional:)``.
    public init(id: ModuleID, versions: VersionRange = .any, isOptional: Bool = false) {
        self.id = id
        self.versions = versions
        self.isOptional = isOptional
    }

    /// Depends on `id` at any version.
    public static func module(_ id: ModuleID, optional: Bool = false) -> Dependency {
        Dependency(id: id, versions: .any, isOptional: optional)
    }

    /// Depends on `id` at a version in `versions`, such as `"1.0.0"..<"2.0.0"` (a malformed version or an empty
    /// range is a validation diagnostic, never a trap).
    public static func module(_ id: ModuleID, _ versions: VersionRange, optional: Bool = false) -> Dependency {
        Dependency(id: id, versions: versions, isOptional: optional)
    }

    /// Depends on `id` at `version` up to the next major version.
    public static func module(_ id: ModuleID, from version: SemanticVersion, optional: Bool = false) -> Dependency {
        Dependency(id: id, versions: .from(version), isOptional: optional)
    }

    /// The value as text, for messages and logs.
    public var description: String {
        "\(id) \(versions)\(isOptional ? " (optional)" : "")"
    }

    enum CodingKeys: String, CodingKey {
        case id, versions
        case isOptional = "optional"
    }

    /// Decodes the value from its text form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(ModuleID.self, forKey: .id)
        self.versions = try container.decodeIfPresent(VersionRange.self, forKey: .versions) ?? .any
        self.isOptional = try container.decodeIfPresent(Bool.self, forKey: .isOptional) ?? false
    }
}
