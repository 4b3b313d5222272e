/// Why a state write was refused, or did not complete.
public struct StateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: the one thing to decide on (retry, report, fix the code), never the message's text.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The handle is not bound to a kernel (a module value made outside one).
        case notRunning = "not-running"
        /// The writer may not write the key: the key names other writers, or the module did not declare that it
        /// writes it (`module.writes(key)`).
        case notAllowed = "not-allowed"
        /// The writing module is not active: its right to write ended when it deactivated.
        case inactive
        /// The storage did not answer in time or could not be reached; the write may still be stored if the
        /// storage answered nothing. Retry later.
        case unavailable
        /// Other instances kept changing the key while this write ran; nothing was stored. Retry.
        case contended
        /// The stored value is in a shape this instance cannot read; nothing was stored, so no data is lost.
        case unreadable
        /// The value, or the key's identifier, cannot be stored (it does not encode, or two keys share an
        /// identifier with different types).
        case invalid
    }

    /// The kind of failure.
    public let code: Code
    /// What happened and what to do.
    public let message: String
    /// The value as text, for messages and logs.
    public var description: String { message }
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
