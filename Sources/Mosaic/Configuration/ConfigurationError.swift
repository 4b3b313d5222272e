/// Why a module's configuration value could not be read.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: the one thing to decide on, never the message's text.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The module read a key it did not declare (`module.configuration(key)`), and the key has no default, so
        /// there is no value boot validated.
        case undeclared
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
