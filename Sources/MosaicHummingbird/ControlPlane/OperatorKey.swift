/// The secret that lets its holder change the app over HTTP (grant or revoke an entitlement, resubmit an event).
///
/// Rules:
/// - 32 to 256 characters, each a letter, a digit or one of `-._~+/=` (what a generator's hex or base64 gives, and
///   what a header or a form carries unchanged); anything else is refused when the key is made, with the fix.
/// - It is compared in time that depends on neither its contents nor its length.
/// - ``random()`` makes one of 64 hex digits from the system's random source: what a host uses when none is given.
public struct OperatorKey: Sendable, Hashable, CustomStringConvertible {
    /// The most characters a key has; longer ones are refused, and every comparison reads this many bytes.
    public static let maximumLength = 256
    /// The fewest characters a key has.
    public static let minimumLength = 32

    /// The key's bytes, padded with zeros to ``maximumLength``, and its length: what every comparison reads.
    private let padded: [UInt8]
    private let length: Int
    /// The key as text, for a host that prints it to its operator (never in a log).
    public let secret: String

    /// The key `secret`, checked.
    ///
    /// - Throws: ``OperatorKeyError`` when it is too short, too long or has a character a key may not have.
    public init(_ secret: String) throws(OperatorKeyError) {
        let bytes = Array(secret.utf8)
        guard bytes.count >= Self.minimumLength else {
            throw OperatorKeyError(
                .tooShort,
                "An operator key needs at least \(Self.minimumLength) characters; this one has \(bytes.count). Make "
                    + "one with `openssl rand -hex 32`.")
        }
        guard bytes.count <= Self.maximumLength else {
            throw OperatorKeyError(
                .tooLong, "An operator key has at most \(Self.maximumLength) characters; this one has \(bytes.count).")
        }
        if let bad = bytes.firstIndex(where: { !Self.allowed($0) }) {
            throw OperatorKeyError(
                .invalidCharacter,
                "An operator key is letters, digits and -._~+/= only; character \(bad + 1) is not one of them. Make "
                    + "one with `openssl rand -hex 32`.")
        }
        self.secret = secret
        length = bytes.count
        padded = bytes + Array(repeating: 0, count: Self.maximumLength - bytes.count)
    }

    /// A new key of 64 hex digits, from the system's random source.
    public static func random() -> OperatorKey {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        let digits = (0..<64).map { _ in hex[Int(generator.next() % 16)] }
        // 64 hex digits always make a valid key.
        return OperatorKey(checked: String(decoding: digits, as: UTF8.self))
    }

    private init(checked secret: String) {
        self.secret = secret
        let bytes = Array(secret.utf8)
        length = bytes.count
        padded = bytes + Array(repeating: 0, count: Self.maximumLength - bytes.count)
    }

    /// Whether `presented` is this key: every one of ``maximumLength`` bytes is compared, whatever either length, so
    /// the time taken tells nothing about the key.
    public func matches(_ presented: some StringProtocol) -> Bool {
        var difference = UInt(bitPattern: presented.utf8.count ^ length)
        var index = 0
        for byte in presented.utf8.prefix(Self.maximumLength) {
            difference |= UInt(byte ^ padded[index])
            index += 1
        }
        while index < Self.maximumLength {
            difference |= UInt(padded[index])
            index += 1
        }
        return difference == 0
    }

    /// Never the key: "(operator key)".
    public var description: String { "(operator key)" }

    private static func allowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
            UInt8(ascii: "/"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    /// Two keys are the same key (compared as ``matches(_:)`` compares).
    public static func == (lhs: OperatorKey, rhs: OperatorKey) -> Bool { lhs.matches(rhs.secret) }

    /// Hashes nothing of the secret: every key hashes alike.
    public func hash(into hasher: inout Hasher) {}
}

/// Why a text cannot be an operator key.
public struct OperatorKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Fewer than ``OperatorKey/minimumLength`` characters.
        case tooShort = "too-short"
        /// More than ``OperatorKey/maximumLength`` characters.
        case tooLong = "too-long"
        /// A character that is not a letter, a digit or one of `-._~+/=`.
        case invalidCharacter = "invalid-character"
    }

    /// The kind of problem.
    public let code: Code
    /// What is wrong and how to make a key that is not.
    public let message: String
    /// The message.
    public var description: String { message }

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
