/// Why a link was rejected or not handled: what is wrong, where, and what to do.
public struct DeeplinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; new codes may be added.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let empty = Code(rawValue: "empty")
        public static let tooLong = Code(rawValue: "too-long")
        public static let invalidCharacter = Code(rawValue: "invalid-character")
        public static let missingScheme = Code(rawValue: "missing-scheme")
        public static let invalidScheme = Code(rawValue: "invalid-scheme")
        public static let schemeNotAllowed = Code(rawValue: "scheme-not-allowed")
        public static let missingTab = Code(rawValue: "missing-tab")
        public static let badPercentEncoding = Code(rawValue: "bad-percent-encoding")
        public static let missingParameter = Code(rawValue: "missing-parameter")
        public static let invalidParameter = Code(rawValue: "invalid-parameter")
        /// No module handles the link's feature and action.
        public static let noHandler = Code(rawValue: "no-handler")
        /// The handling module did not become active in time.
        public static let moduleInactive = Code(rawValue: "module-inactive")
        /// The handler requires an entitlement the host has not granted.
        public static let notEntitled = Code(rawValue: "not-entitled")
        /// Too many links are already waiting for their modules.
        public static let pendingLimit = Code(rawValue: "pending-limit")
        /// The handler threw.
        public static let handlerFailed = Code(rawValue: "handler-failed")
        /// The handler may change the app's state, and the link was to be opened only if it does not.
        public static let needsConfirmation = Code(rawValue: "needs-confirmation")
    }

    public let code: Code
    public let message: String
    public let fix: String

    public init(_ code: Code, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    public var description: String { "\(message) \(fix)" }
}
