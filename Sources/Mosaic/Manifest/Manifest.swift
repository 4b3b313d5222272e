/// Everything the kernel needs to know about a module before running any of its code.
///
/// A module declares its manifest statically, so the kernel can validate the whole graph (identifiers, versions,
/// host compatibility, dependencies, cycles, entitlements) before a single module is created.
public struct Manifest: Sendable, Hashable, Codable {
    /// The module's reverse-DNS identifier.
    public var id: ModuleID
    /// The module's version.
    public var version: SemanticVersion
    /// Other modules this one needs, or can use when present.
    public var dependencies: [Dependency]
    /// Capabilities the host must grant before this module activates.
    public var entitlements: Set<Entitlement>
    /// What the module needs from the host.
    public var compatibility: Compatibility
    /// Where the module's code runs: in the host's process, or in a process of its own, so that a trap in it ends
    /// only that process. A host may isolate any module besides (`KernelOptions.isolation`).
    public var isolation: ModuleIsolation

    /// Declares a module.
    ///
    /// ```swift
    /// static let manifest = Manifest(
    ///     id: "com.ghost.weather", version: "1.4.0",
    ///     requires: [.module("com.ghost.location", "1.0.0"..<"2.0.0")],
    ///     entitlements: ["weather"])
    /// ```
    public init(
        id: ModuleID,
        version: SemanticVersion,
        requires dependencies: [Dependency] = [],
        entitlements: Set<Entitlement> = [],
        compatibility: Compatibility = .any,
        isolation: ModuleIsolation = .inProcess
    ) {
        self.id = id
        self.version = version
        self.dependencies = dependencies
        self.entitlements = entitlements
        self.compatibility = compatibility
        self.isolation = isolation
    }
}

/// Where a module's code runs.
public enum ModuleIsolation: String, Sendable, Hashable, Codable {
    /// In the host's process, beside every other module: a trap in it ends them all.
    case inProcess = "in-process"
    /// In a child process of the host's own executable: a trap, a signal or an exit fails that module alone, which
    /// the host restarts within a budget. What crosses the boundary is encoded: contributions' content must be
    /// `Codable`, and the module shares no services with others (the kernel's validation says what does not cross).
    case process
}

extension Manifest {
    enum CodingKeys: String, CodingKey {
        case id, version, dependencies, entitlements, compatibility, isolation
    }

    /// Reads a manifest in which only `id` and `version` are required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(ModuleID.self, forKey: .id),
            version: try container.decode(SemanticVersion.self, forKey: .version),
            requires: try container.decodeIfPresent([Dependency].self, forKey: .dependencies) ?? [],
            entitlements: try container.decodeIfPresent(Set<Entitlement>.self, forKey: .entitlements) ?? [],
            compatibility: try container.decodeIfPresent(Compatibility.self, forKey: .compatibility) ?? .any,
            isolation: try container.decodeIfPresent(ModuleIsolation.self, forKey: .isolation) ?? .inProcess
        )
    }
}
