/// The host's own shared behaviour that modules may build on (Spezi's Standard): one value the host provides.
///
/// A module that needs the standard to do something declares it with
/// ``ModuleRegistrar/requireStandard(_:)``; a host whose standard does not conform is a validation error, not a
/// crash at run time.
public protocol Standard: Sendable {}

/// A module's demand that the host's standard conform to a protocol.
package struct StandardRequirement: Sendable {
    /// The protocol's name, for messages.
    package let name: String
    /// Whether a standard meets the requirement.
    package let isMet: @Sendable (any Standard) -> Bool
}

extension ModuleRegistrar {
    /// Requires the host's standard to conform to `type` (a protocol existential, such as
    /// `(any HealthStandard).self`); read it in `activate` with ``ActivationContext/standard(as:)``.
    public mutating func requireStandard<S>(_ type: S.Type) {
        standardRequirements.append(StandardRequirement(name: qualifiedTypeName(type)) { $0 is S })
    }
}
