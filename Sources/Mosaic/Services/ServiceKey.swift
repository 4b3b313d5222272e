/// Names a service by its type: usually a protocol existential such as `(any WeatherService).self`.
public struct ServiceKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The type's identity.
    public let id: ObjectIdentifier

    /// The key of `type`.
    public init(_ type: any Any.Type) {
        id = ObjectIdentifier(type)
    }

    /// The type's name, for messages; made only when asked for, so that registering is cheap.
    public var name: String {
        // The identifier of a metatype is its metadata pointer, which is the metatype itself.
        String(describing: unsafeBitCast(id, to: Any.Type.self))
    }

    public static func == (lhs: ServiceKey, rhs: ServiceKey) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public static func < (lhs: ServiceKey, rhs: ServiceKey) -> Bool { lhs.name < rhs.name }
    public var description: String { name }
}

/// How long a service's instance lives.
public enum ServiceScope: Sendable, Hashable, CustomStringConvertible {
    /// A new instance for every resolution.
    case transient
    /// One instance per kernel, built on first use and kept while its module is active.
    case singleton
    /// One instance until `resetCached()`; then built again on next use.
    case cached

    public var description: String {
        switch self {
        case .transient: "transient"
        case .singleton: "singleton"
        case .cached: "cached"
        }
    }
}

/// How a registration ranks against another registration of the same service.
public enum ServiceRank: Int, Sendable, Hashable, Comparable {
    /// Used only when nothing else provides the service: a module's own fallback.
    case fallback
    /// The normal provider; two of them for one service is an error.
    case primary
    /// Replaces any other provider: for composition roots and hosts.
    case override

    public static func < (lhs: ServiceRank, rhs: ServiceRank) -> Bool { lhs.rawValue < rhs.rawValue }
}
