/// Why a link was rejected or not handled: what is wrong, where, and what to do.
public struct DeeplinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; new codes may be added.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The value as text.
        public let rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The value as text, for messages and logs.
        public var description: String { rawValue }

        /// The link is empty.
        public static let empty = Code(rawValue: "empty")
        /// The link is longer than the rules allow.
        public static let tooLong = Code(rawValue: "too-long")
        /// The link holds a control character or a space.
        public static let invalidCharacter = Code(rawValue: "invalid-character")
        /// The link has no `scheme://`.
        public static let missingScheme = Code(rawValue: "missing-scheme")
        /// The scheme is not letters, digits, `+`, `-` or `.` after a letter.
        public static let invalidScheme = Code(rawValue: "invalid-scheme")
        /// The scheme is not one the host accepts.
        public static let schemeNotAllowed = Code(rawValue: "scheme-not-allowed")
        /// The link names no tab.
        public static let missingTab = Code(rawValue: "missing-tab")
        /// A `%` escape is malformed or not UTF-8.
        public static let badPercentEncoding = Code(rawValue: "bad-percent-encoding")
        /// A parameter the route needs is missing.
        public static let missingParameter = Code(rawValue: "missing-parameter")
        /// A parameter's value is not one the route accepts.
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
        /// The handler's write (shared state, a durable event) did not reach its storage in time; opening the link
        /// again later may succeed.
        public static let storageUnavailable = Code(rawValue: "storage-unavailable")
        /// The handler may change the app's state, and the link was to be opened only if it does not.
        public static let needsConfirmation = Code(rawValue: "needs-confirmation")
    }

    /// The kind of failure.
    public let code: Code
    /// What happened and what to do.
    public let message: String
    /// How to fix it.
    public let fix: String

    /// An error of kind `code`: `message` says what is wrong, `fix` what to do.
    public init(_ code: Code, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// The value as text, for messages and logs.
    public var description: String { "\(message) \(fix)" }
}
