public import Mosaic

/// What happened when the kernel ran a lifecycle phase or delivered a host event: each module that took part,
/// how long it took, and how it ended. A participant that failed did not stop the others.
public struct DispatchReport: Sendable {
    /// How one module's part ended.
    public enum Outcome: Sendable, Hashable {
        /// The participant or listener returned.
        case completed
        /// It threw; the text names the module and quotes the error (cut to 500 characters).
        case failed(String)
        /// It did not return within `KernelOptions.participantTimeLimit` and was cancelled.
        case timedOut
    }

    /// One module's part.
    public struct Entry: Sendable, Hashable {
        /// The module that took part.
        public let module: ModuleID
        /// How long its participants or listeners ran, together.
        public let duration: Duration
        /// How its part ended.
        public let outcome: Outcome
    }

    /// The phase run or event sent, as text: "launch", "event enteredBackground".
    public let name: String
    /// The modules that took part, in the order they finished.
    public let entries: [Entry]
    /// How long the whole dispatch took.
    public let duration: Duration

    /// The entry of module `id`, if it took part.
    public subscript(id: ModuleID) -> Entry? { entries.first { $0.module == id } }

    /// The modules whose part failed or timed out.
    public var failures: [Entry] { entries.filter { $0.outcome != .completed } }
}
