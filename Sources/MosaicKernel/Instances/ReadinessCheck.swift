/// One thing an instance needs to serve what the others serve, and how it stands: external storage that answers, a
/// change feed proven alive, a policy read that succeeded. A host is not ready while any check fails.
public struct ReadinessCheck: Sendable, Equatable {
    /// What is checked, for people: "external storage", "change feed", "stored policy".
    public let name: String
    /// Whether the check passes now.
    public let passing: Bool
    /// What was found, with the fix when it fails.
    public let detail: String
    /// How long ago the check last passed; `nil` when it never did.
    public let sincePassed: Duration?

    /// A check's outcome.
    public init(name: String, passing: Bool, detail: String, sincePassed: Duration?) {
        self.name = name
        self.passing = passing
        self.detail = detail
        self.sincePassed = sincePassed
    }
}
