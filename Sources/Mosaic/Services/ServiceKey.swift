/// Names a service and the type it resolves to; declared once, beside the service's protocol, in the interface
/// that providers and users share (as ``StateKey`` is for shared state):
///
/// ```swift
/// extension ServiceKey where Value == any WeatherData {
///     /// Weather by city.
///     public static var weatherData: Self { Self() }
/// }
///
/// module.services.singleton(.weatherData) { try SampleWeather() }    // the provider
/// @Injected(.weatherData) var weather                                 // a user
/// ```
/// Two keys of one `Value` name the same service.
public struct ServiceKey<Value: Sendable>: Sendable, Hashable {
    /// The key of the service whose type is `Value`.
    @inlinable
    public init() {}

    /// The key of the service whose type is `type`: `ServiceKey(SampleWeather.self)` for a concrete type.
    @inlinable
    public init(_ type: Value.Type) {}

    /// The key with its type erased, as the kernel keeps it.
    @usableFromInline
    package var erased: AnyServiceKey { AnyServiceKey(Value.self) }

    /// The service's type's module-qualified name, for messages.
    public var name: String { qualifiedTypeName(Value.self) }
}

/// A service key with its type erased: the type's identity, for the kernel's tables and messages.
@usableFromInline
package struct AnyServiceKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The type's identity.
    package let id: ObjectIdentifier

    /// The key of `type`.
    @usableFromInline
    package init(_ type: any Any.Type) {
        id = ObjectIdentifier(type)
    }

    /// The type's module-qualified name (`any GhostApp.WeatherData`), for messages, so that two types of one
    /// name in different modules never read the same; made only when asked for, so that registering is cheap.
    package var name: String {
        // The identifier of a metatype is its metadata pointer, which is the metatype itself.
        qualifiedTypeName(unsafeBitCast(id, to: Any.Type.self))
    }

    @usableFromInline package static func == (lhs: AnyServiceKey, rhs: AnyServiceKey) -> Bool { lhs.id == rhs.id }
    @usableFromInline package func hash(into hasher: inout Hasher) { hasher.combine(id) }
    @usableFromInline package static func < (lhs: AnyServiceKey, rhs: AnyServiceKey) -> Bool { lhs.name < rhs.name }
    @usableFromInline package var description: String { name }
}

/// How long a service's instance lives.
public enum ServiceScope: Sendable, Hashable, CustomStringConvertible {
    /// A new instance for every resolution.
    case transient
    /// One instance per kernel, built on first use and kept while its module is active.
    case singleton
    /// One instance until `resetCached()`; then built again on next use.
    case cached

    /// The scope's name, as messages print it.
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

    /// Whether `lhs` ranks below `rhs`.
    public static func < (lhs: ServiceRank, rhs: ServiceRank) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `type`'s module-qualified name, as every message names a type: `GhostApp.WeatherData`, `Array<String>`. The
/// runtime's "(unknown context at $…)" of private types and the standard library's `Swift.` are left out: neither
/// helps a reader tell two types apart.
@usableFromInline package func qualifiedTypeName(_ type: any Any.Type) -> String {
    // `_typeName` is what `String(reflecting:)` prints for a type, without the dynamic casts on the way there: the
    // first cast to each protocol scans every conformance record in the process, milliseconds in a new process.
    let name = Array(_typeName(type, qualified: true).utf8)
    var result: [UInt8] = []
    result.reserveCapacity(name.count)
    var index = 0
    while index < name.count {
        let rest = name[index...]
        if rest.starts(with: "(unknown context at $".utf8), let end = rest.indexOfSubsequence(").".utf8) {
            index = end + 2
        } else if rest.starts(with: "Swift.".utf8), result.last.map(continuesName) != true {
            index += 6  // only where a name starts: not the end of `MySwift.`
        } else {
            result.append(name[index])
            index += 1
        }
    }
    return String(decoding: result, as: UTF8.self)
}

/// Whether `byte` can be part of a name or its qualifier (any byte of a non-ASCII character counts).
private func continuesName(_ byte: UInt8) -> Bool {
    switch Unicode.Scalar(byte) {
    case "a"..."z", "A"..."Z", "0"..."9", "_", ".": true
    default: byte >= 0x80
    }
}

extension ArraySlice<UInt8> {
    /// Where `pattern` first starts in the slice, if anywhere.
    fileprivate func indexOfSubsequence(_ pattern: String.UTF8View) -> Int? {
        var start = startIndex
        while start < endIndex {
            if self[start...].starts(with: pattern) { return start }
            start += 1
        }
        return nil
    }
}
