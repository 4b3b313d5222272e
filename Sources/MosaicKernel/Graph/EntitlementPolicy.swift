public import Mosaic

/// Which entitlements the host grants. The kernel activates a module only while all its entitlements are granted.
public struct EntitlementPolicy: Sendable, Hashable {
    /// The granted entitlements.
    public private(set) var granted: Set<Entitlement>

    /// Grants exactly `entitlements`.
    public static func granted(_ entitlements: Set<Entitlement>) -> EntitlementPolicy {
        EntitlementPolicy(granted: entitlements)
    }

    /// Grants nothing.
    public static let none = EntitlementPolicy(granted: [])

    /// Whether `entitlement` is granted.
    public func grants(_ entitlement: Entitlement) -> Bool { granted.contains(entitlement) }

    /// Grants `entitlement`.
    public mutating func grant(_ entitlement: Entitlement) { granted.insert(entitlement) }

    /// Revokes `entitlement`.
    public mutating func revoke(_ entitlement: Entitlement) { granted.remove(entitlement) }
}
