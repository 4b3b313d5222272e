/// How a ``DeeplinkRoute`` reads and prints its query by default: each stored property is one query item, named
/// after the property, through the route's `Codable` conformance (which Swift writes for it). Values are strings,
/// numbers, booleans, types made from one of them (such as a `String` raw-value enum), or optionals of them.
extension DeeplinkRoute {
    /// Reads the route's properties from `link`'s query; a missing or unreadable value throws, naming the item.
    public init(link: Deeplink) throws(DeeplinkError) {
        do {
            self = try Self(from: QueryDecoder(query: link.query, url: link.url))
        } catch let error as DeeplinkError {
            throw error
        } catch {
            throw DeeplinkError(
                .invalidParameter, "The link \(link.url.quotedForMessage()) does not read as \(Self.self): \(error).",
                fix: "Open the link with the parameters \(Self.self) declares.")
        }
    }

    /// The route's properties as query items, in declaration order; `nil` optionals are left out.
    public var query: [QueryItem] {
        let encoder = QueryEncoder()
        // Encoding only stores strings, so it throws only for shapes a query cannot hold (nested containers).
        try? encode(to: encoder)
        return encoder.items.items
    }
}

/// The items a ``QueryEncoder`` collects, shared by its containers.
private final class QueryItems {
    var items: [QueryItem] = []
}

private struct QueryEncoder: Encoder {
    let items: QueryItems
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed(items: items, codingPath: codingPath))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
    func singleValueContainer() -> any SingleValueEncodingContainer { Single(items: items, codingPath: codingPath) }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let items: QueryItems
        var codingPath: [any CodingKey]
        mutating func add(_ value: some LosslessStringConvertible, _ key: Key) {
            items.items.append(QueryItem(key.stringValue, value.description))
        }
        mutating func encodeNil(forKey key: Key) {}
        mutating func encode(_ value: Bool, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: String, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Double, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Float, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Int, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Int8, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Int16, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Int32, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: Int64, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: UInt, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: UInt8, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: UInt16, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: UInt32, forKey key: Key) { add(value, key) }
        mutating func encode(_ value: UInt64, forKey key: Key) { add(value, key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let single = QueryEncoder()
            try value.encode(to: single)
            for item in single.items.items { items.items.append(QueryItem(key.stringValue, item.value)) }
        }
        mutating func nestedContainer<Nested: CodingKey>(
            keyedBy keyType: Nested.Type, forKey key: Key
        ) -> KeyedEncodingContainer<Nested> {
            KeyedEncodingContainer(Keyed<Nested>(items: QueryItems(), codingPath: codingPath + [key]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unsupported(codingPath: codingPath + [key])
        }
        mutating func superEncoder() -> any Encoder { QueryEncoder() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { QueryEncoder() }
    }

    /// One value, as a property of a type made from one value (a raw-value enum) encodes it.
    struct Single: SingleValueEncodingContainer {
        let items: QueryItems
        var codingPath: [any CodingKey]
        mutating func encodeNil() {}
        mutating func encode(_ value: Bool) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: String) { items.items.append(QueryItem("", value)) }
        mutating func encode(_ value: Double) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: Float) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: Int) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: Int8) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: Int16) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: Int32) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: Int64) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: UInt) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: UInt8) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: UInt16) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: UInt32) { items.items.append(QueryItem("", value.description)) }
        mutating func encode(_ value: UInt64) { items.items.append(QueryItem("", value.description)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: QueryEncoder(items: items)) }
    }

    init(items: QueryItems = QueryItems()) {
        self.items = items
    }
}

/// A query cannot hold lists or nested values: encoding one fails.
private struct Unsupported: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey]
    var count: Int { 0 }
    private func fail() throws -> Never {
        throw EncodingError.invalidValue(
            codingPath, .init(codingPath: codingPath, debugDescription: "a link's query holds no lists"))
    }
    mutating func encodeNil() throws { try fail() }
    mutating func encode<T: Encodable>(_ value: T) throws { try fail() }
    mutating func nestedContainer<Nested: CodingKey>(keyedBy keyType: Nested.Type) -> KeyedEncodingContainer<Nested> {
        KeyedEncodingContainer(QueryEncoder.Keyed<Nested>(items: QueryItems(), codingPath: codingPath))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { QueryEncoder() }
}

private struct QueryDecoder: Decoder {
    let query: [QueryItem]
    /// The link, for messages.
    var url = ""
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// The value a single-value container reads.
    var single: String?

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed(query: query, url: url, codingPath: codingPath))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: codingPath, debugDescription: "a link's query holds no lists"))
    }
    func singleValueContainer() -> any SingleValueDecodingContainer {
        Single(value: single ?? "", codingPath: codingPath)
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let query: [QueryItem]
        let url: String
        var codingPath: [any CodingKey]
        var allKeys: [Key] { query.compactMap { Key(stringValue: $0.name) } }

        func contains(_ key: Key) -> Bool { query.contains { $0.name == key.stringValue } }
        func decodeNil(forKey key: Key) -> Bool { !contains(key) }
        func text(_ key: Key) throws(DeeplinkError) -> String {
            guard let item = query.first(where: { $0.name == key.stringValue }) else {
                throw DeeplinkError(
                    .missingParameter, "\(url) has no \"\(key.stringValue)\" parameter.",
                    fix: "Add ?\(key.stringValue)=… to the link.")
            }
            return item.value
        }
        func value<T: LosslessStringConvertible>(_ key: Key) throws(DeeplinkError) -> T {
            let text = try text(key)
            guard let value = T(text) else {
                throw DeeplinkError(
                    .invalidParameter,
                    "The link's \"\(key.stringValue)\" is \(text.quotedForMessage()), not a \(T.self).",
                    fix: "Give \(key.stringValue) a \(T.self) value.")
            }
            return value
        }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try text(key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let text = try text(key)
            do {
                return try T(from: QueryDecoder(query: [], codingPath: codingPath + [key], single: text))
            } catch {
                throw DeeplinkError(
                    .invalidParameter,
                    "The link's \"\(key.stringValue)\" is \(text.quotedForMessage()), not a \(T.self).",
                    fix: "Give \(key.stringValue) a \(T.self) value.")
            }
        }
        func nestedContainer<Nested: CodingKey>(
            keyedBy type: Nested.Type, forKey key: Key
        ) -> KeyedDecodingContainer<Nested> {
            KeyedDecodingContainer(Keyed<Nested>(query: [], url: url, codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try QueryDecoder(query: [], codingPath: codingPath + [key]).unkeyedContainer()
        }
        func superDecoder() -> any Decoder { QueryDecoder(query: query, url: url, codingPath: codingPath) }
        func superDecoder(forKey key: Key) -> any Decoder {
            QueryDecoder(query: query, url: url, codingPath: codingPath)
        }
    }

    /// One value, for a type made from one value (a raw-value enum).
    struct Single: SingleValueDecodingContainer {
        let value: String
        var codingPath: [any CodingKey]
        func decodeNil() -> Bool { false }
        func parse<T: LosslessStringConvertible>() throws -> T {
            guard let parsed = T(value) else {
                throw DecodingError.typeMismatch(
                    T.self,
                    .init(codingPath: codingPath, debugDescription: "\(value.quotedForMessage()) is not a \(T.self)"))
            }
            return parsed
        }
        func decode(_ type: Bool.Type) throws -> Bool { try parse() }
        func decode(_ type: String.Type) throws -> String { value }
        func decode(_ type: Double.Type) throws -> Double { try parse() }
        func decode(_ type: Float.Type) throws -> Float { try parse() }
        func decode(_ type: Int.Type) throws -> Int { try parse() }
        func decode(_ type: Int8.Type) throws -> Int8 { try parse() }
        func decode(_ type: Int16.Type) throws -> Int16 { try parse() }
        func decode(_ type: Int32.Type) throws -> Int32 { try parse() }
        func decode(_ type: Int64.Type) throws -> Int64 { try parse() }
        func decode(_ type: UInt.Type) throws -> UInt { try parse() }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try parse() }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try parse() }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try parse() }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try parse() }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try T(from: QueryDecoder(query: [], codingPath: codingPath, single: value))
        }
    }
}
