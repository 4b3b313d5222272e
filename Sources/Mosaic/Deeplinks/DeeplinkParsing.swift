/// What links a host accepts.
///
/// A kernel accepts only its host's own schemes unless told otherwise: with ``allowedSchemes`` empty (the default)
/// it takes `HostEnvironment.schemes`, and with neither set it refuses every link, saying how to declare a scheme.
/// A link with any other scheme (`javascript://…`, `file://…`) is refused with a message naming the allowed ones,
/// whether it comes as text or as a ``Deeplink`` the host built. ``anyScheme`` opts out of the check, as the test
/// harness does by default. Links are at most ``maximumLength`` bytes; control characters, spaces and malformed
/// `%` escapes are refused.
///
/// Links from outside are parsed by the kernel and the hosts under these rules, never by module code, which builds
/// its links with `ActivationContext.url(for:)`.
public struct DeeplinkRules: Sendable, Hashable {
    /// The schemes accepted, lowercased; empty means the host's own schemes where a kernel applies the rules, and
    /// any well-formed scheme where a link is only parsed. ``anyScheme`` in the set accepts any well-formed scheme.
    public var allowedSchemes: Set<String>
    /// The longest link accepted, in UTF-8 bytes.
    public var maximumLength: Int

    /// Put in ``allowedSchemes``, accepts every well-formed scheme.
    public static let anyScheme = "*"

    /// Rules that accept `allowedSchemes` (empty: the host's own) and links of at most `maximumLength` bytes.
    public init(allowedSchemes: Set<String> = [], maximumLength: Int = 2_048) {
        self.allowedSchemes = Set(allowedSchemes.map { $0.lowercased() })
        self.maximumLength = maximumLength
    }
}

extension DeeplinkRules {
    /// Refuses `scheme` unless ``allowedSchemes`` names it or ``anyScheme``; an empty set accepts nothing here.
    package func check(scheme: String) throws(DeeplinkError) {
        let scheme = scheme.lowercased()
        // Lowered here too: `allowedSchemes` is a public var, set past the initializer that lowers it.
        guard !allowedSchemes.contains(Self.anyScheme), !allowedSchemes.contains(where: { $0.lowercased() == scheme })
        else { return }
        let shown = scheme.quotedForMessage(limit: 40)
        guard !allowedSchemes.isEmpty else {
            throw DeeplinkError(
                .schemeNotAllowed, "The scheme \(shown) is not accepted: this host declares no link schemes.",
                fix: "Declare the host's scheme, HostEnvironment(version: …, schemes: [\"myapp\"]), or set "
                    + "KernelOptions.deeplinkRules.allowedSchemes.")
        }
        let allowed = allowedSchemes.sorted().joined(separator: ", ")
        throw DeeplinkError(
            .schemeNotAllowed, "The scheme \(shown) is not accepted here; this host accepts \(allowed).",
            fix: "Write the link with one of: \(allowed).")
    }
}

extension Deeplink {
    /// Parses `text` (`scheme://tab/feature/action/more?key=value`), or says why it cannot.
    ///
    /// Segments and query parts are percent-decoded, `+` in the query is a space, a `#fragment` is ignored, and
    /// empty segments are skipped. Control characters, spaces and malformed `%` escapes are rejected.
    @_spi(Hosting) public init(parsing text: String, rules: DeeplinkRules = DeeplinkRules()) throws(DeeplinkError) {
        let bytes = try Self.check(text, rules: rules)
        guard let separator = Self.find(Array("://".utf8), in: bytes) else {
            throw DeeplinkError(
                .missingScheme, "\"\(Self.excerpt(text))\" has no scheme.",
                fix: "Write links as scheme://tab/feature/action, such as ghost://dashboard/weather/city?name=Oslo.")
        }
        let scheme = String(decoding: bytes[..<separator], as: UTF8.self).lowercased()
        try Self.checkScheme(scheme, rules: rules)
        try self.init(scheme: scheme, rest: bytes[(separator + 3)...])
    }

    /// Parses the path form a web host receives, `/tab/feature/action?key=value`, as a link of `scheme`.
    @_spi(Hosting) public init(parsingPath text: String, scheme: String, rules: DeeplinkRules = DeeplinkRules())
        throws(DeeplinkError)
    {
        let bytes = try Self.check(text, rules: rules)
        try self.init(scheme: scheme.lowercased(), rest: bytes[...])
    }

    private init(scheme: String, rest: ArraySlice<UInt8>) throws(DeeplinkError) {
        var rest = rest
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        let question = rest.firstIndex(of: UInt8(ascii: "?"))
        var segments: [String] = []
        for part in rest[..<(question ?? rest.endIndex)].split(separator: UInt8(ascii: "/")) {
            segments.append(try Self.decode(part, plusIsSpace: false))
        }
        guard let tab = segments.first else {
            throw DeeplinkError(
                .missingTab, "\(scheme):// names no tab.",
                fix: "Add the tab and the feature after the scheme: \(scheme)://dashboard/weather.")
        }
        let query = try question.map { index throws(DeeplinkError) in try Self.queryItems(rest[(index + 1)...]) } ?? []
        self.init(
            scheme: scheme, tab: tab, feature: segments.dropFirst().first, action: segments.dropFirst(2).first,
            path: Array(segments.dropFirst(3)), query: query)
    }

    /// The text's bytes, once it is known to be non-empty, short enough and free of controls and spaces.
    private static func check(_ text: String, rules: DeeplinkRules) throws(DeeplinkError) -> [UInt8] {
        let length = text.utf8.count
        guard length > 0 else {
            throw DeeplinkError(.empty, "The link is empty.", fix: "Pass a link such as ghost://dashboard/weather.")
        }
        guard length <= rules.maximumLength else {
            throw DeeplinkError(
                .tooLong, "The link is \(length) bytes long; links are at most \(rules.maximumLength).",
                fix: "Shorten the link; pass large data some other way than in a link.")
        }
        let bytes = Array(text.utf8)
        if let offset = bytes.firstIndex(where: { $0 <= 0x20 || $0 == 0x7F }) {
            let name = bytes[offset] == 0x20 ? "a space" : "control character 0x\(String(bytes[offset], radix: 16))"
            throw DeeplinkError(
                .invalidCharacter, "The link has \(name) at byte \(offset).",
                fix: "Percent-encode it (a space is %20) or remove it.")
        }
        return bytes
    }

    private static func checkScheme(_ scheme: String, rules: DeeplinkRules) throws(DeeplinkError) {
        let valid =
            scheme.utf8.first.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } == true
            && scheme.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
        guard valid else {
            throw DeeplinkError(
                .invalidScheme, "\"\(excerpt(scheme))\" is not a valid scheme.",
                fix: "A scheme starts with a letter and has only letters, digits, +, - and .")
        }
        if !rules.allowedSchemes.isEmpty { try rules.check(scheme: scheme) }
    }

    /// The items of a query (`a=1&b=two+words`), percent-decoded with `+` as a space, in order.
    static func queryItems(_ query: ArraySlice<UInt8>) throws(DeeplinkError) -> [QueryItem] {
        var items: [QueryItem] = []
        for pair in query.split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = try Self.decode(pair[..<(equals ?? pair.endIndex)], plusIsSpace: true)
            let value = try equals.map { index throws(DeeplinkError) in
                try Self.decode(pair[(index + 1)...], plusIsSpace: true)
            }
            items.append(QueryItem(name, value ?? ""))
        }
        return items
    }

    /// `part` percent-decoded (and `+` as a space in the query), as UTF-8 text without control characters.
    private static func decode(_ part: ArraySlice<UInt8>, plusIsSpace: Bool) throws(DeeplinkError) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(part.count)
        var index = part.startIndex
        while index < part.endIndex {
            let byte = part[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < part.endIndex, let high = hex(part[index + 1]), let low = hex(part[index + 2])
                else {
                    throw DeeplinkError(
                        .badPercentEncoding, "The link has a % at byte \(index) not followed by two hex digits.",
                        fix: "Write a literal % as %25, and escapes as % and two hex digits, such as %20.")
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard let text = String(validating: decoded, as: UTF8.self) else {
            throw DeeplinkError(
                .badPercentEncoding, "The escapes near byte \(part.startIndex) do not decode to UTF-8 text.",
                fix: "Percent-encode the UTF-8 bytes of the text.")
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw DeeplinkError(
                .invalidCharacter, "An escape near byte \(part.startIndex) decodes to a control character.",
                fix: "Remove the control character from the link.")
        }
        return text
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// At most 60 characters of `text`, for messages.
    private static func excerpt(_ text: String) -> String {
        text.count <= 60 ? text : text.prefix(57) + "..."
    }
}
