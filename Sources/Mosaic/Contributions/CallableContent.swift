/// Content that answers calls, such as a web route: what lets it cross to a module that runs in a process of its
/// own.
///
/// Content that is `Codable` crosses as a value. Content that holds a function (a handler) cannot; if it conforms
/// here, the host keeps a stand-in made from the contribution's metadata, and each call crosses to the module's
/// process, is answered there by the real content, and its answer comes back:
///
/// ```swift
/// extension Command: CallableContent {
///     func answer(_ input: CommandInput) async throws -> CommandOutput { try await run(input) }
///     static func standIn(
///         _ metadata: ContributionMetadata, answer: @escaping @Sendable (CommandInput) async throws -> CommandOutput
///     ) -> Command? {
///         Command(name: metadata.title, run: answer)
///     }
/// }
/// ```
public protocol CallableContent: Sendable {
    /// What a call carries.
    associatedtype Call: Codable & Sendable
    /// What answers it.
    associatedtype Answer: Codable & Sendable

    /// Answers `call`: runs the content's function.
    func answer(_ call: Call) async throws -> Answer

    /// The stand-in the host keeps for the content of a contribution with `metadata`, whose calls `answer` carries
    /// to the module's process; `nil` when the metadata does not say enough to make one.
    static func standIn(
        _ metadata: ContributionMetadata, answer: @escaping @Sendable (Call) async throws -> Answer
    ) -> Self?
}
