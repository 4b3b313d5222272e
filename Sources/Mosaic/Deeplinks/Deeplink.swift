/// A link into the app, `scheme://tab/feature/action/more?key=value`, parsed into its parts.
///
/// ```swift
/// let link = try Deeplink(parsing: "ghost://dashboard/weather/city?name=New%20York")
/// link.feature      // "weather"
/// link["name"]      // "New York"
/// ```
/// Parsing is strict and total: any string, of any length, either parses or is rejected with a
/// ``DeeplinkError`` that says what is wrong and where. Building a link from its parts and printing it with
/// ``url`` gives text that parses back to the same link.
public struct Deeplink: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, lowercased: `ghost`.
    public let scheme: String
    /// The tab the app should show: `dashboard`.
    public let tab: String
    /// The feature that handles the link: `weather`.
    public let feature: String?
    /// What the feature should do: `city`.
    public let action: String?
    /// The path after the action, decoded.
    public let path: [String]
    /// The query items in order; a key may repeat.
    public let query: [QueryItem]

    /// A link from its parts; ``url`` prints it.
    public init(
        scheme: String, tab: String, feature: String? = nil, action: String? = nil, path: [String] = [],
        query: [QueryItem] = []
    ) {
        self.scheme = scheme.lowercased()
        self.tab = tab
        self.feature = feature
        self.action = action
        self.path = path
        self.query = query
    }

    /// The first value of query key `name`.
    public subscript(name: String) -> String? { query.first { $0.name == name }?.value }

    /// Every value of query key `name`, in order.
    public func values(of name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }

    /// The value of query key `name`, or an error naming the missing parameter.
    public func require(_ name: String) throws(DeeplinkError) -> String {
        guard let value = self[name] else {
            throw DeeplinkError(
                .missingParameter, "\(url) has no \"\(name)\" parameter.", fix: "Add ?\(name)=… to the link.")
        }
        return value
    }

    /// The link as text, percent-encoded so that it parses back to this link.
    public var url: String {
        let segments = [tab] + [feature, action].compactMap { $0 } + path
        var text = scheme + "://" + segments.map { Self.encode($0) }.joined(separator: "/")
        if !query.isEmpty {
            text += "?" + query.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
        }
        return text
    }

    /// The value as text, for messages and logs.
    public var description: String { url }

    /// Percent-encodes everything but unreserved characters (RFC 3986).
    static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(hex[Int(byte >> 4)])
                encoded.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return encoded
    }
}

/// One `name=value` of a link's query.
public struct QueryItem: Sendable, Hashable, Codable {
    /// The name, as hosts and messages show it.
    public let name: String
    /// The item's value, decoded.
    public let value: String

    /// The item `name=value`.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// The items of a query string or a form body (`a=1&b=two+words`), decoded as a link's query is: percent
    /// escapes and `+` as a space; malformed escapes and control characters are rejected with their reason.
    @_spi(Hosting) public static func items(parsing query: String) throws(DeeplinkError) -> [QueryItem] {
        try Deeplink.queryItems(Array(query.utf8)[...])
    }
}
