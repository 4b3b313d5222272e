/// A named capability the host grants or revokes, such as `weather` or `premium.export`.
///
/// A module lists the entitlements it needs; the kernel activates it only while all of them are granted.
public struct Entitlement: Sendable, Hashable, Comparable, Codable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The entitlement's name.
    public let name: String

    /// Creates an entitlement from its name; ``problem`` says whether the name is usable.
    public init(_ name: String) {
        self.name = name
    }

    /// Creates an entitlement from its name; never fails. Codable uses this.
    public init(rawValue: String) {
        self.init(rawValue)
    }

    /// The entitlement's name, as Codable and `RawRepresentable` see it.
    public var rawValue: String { name }

    /// The entitlement named by a string literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The name; one too long to be usable is cut with its length stated, for messages.
    public var description: String { name.unicodeScalars.count <= 128 ? name : name.quotedForMessage() }

    /// Whether `lhs` sorts before `rhs`.
    public static func < (lhs: Entitlement, rhs: Entitlement) -> Bool { lhs.name < rhs.name }

    /// What is wrong with the name, or `nil` when it is 1–128 printable ASCII characters without spaces.
    public var problem: String? {
        let scalars = name.unicodeScalars
        if scalars.isEmpty { return "an entitlement name is empty; name the capability, such as 'weather'" }
        if scalars.count > 128 { return "entitlement '\(name.prefix(40))…' is longer than 128 characters; shorten it" }
        if !scalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) {
            return
                "entitlement '\(name.prefix(40))' has spaces, control or non-ASCII characters; use printable ASCII only"
        }
        return nil
    }
}
