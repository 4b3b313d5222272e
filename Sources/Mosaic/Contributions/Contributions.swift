/// What reads the mediated contributions of extension points: the kernel, or a test harness.
package protocol ContributionSource: Sendable {
    /// The contributions visible now, in the point's order.
    func contributions<Content>(for point: ExtensionPoint<Content>) -> [Contribution<Content>]
    /// The current list, then every new list whenever modules come and go or entitlements change.
    func updates<Content>(of point: ExtensionPoint<Content>) -> Feed<[Contribution<Content>]>
}

/// A module's window on every module's contributions (Spezi's `@Collect`): a module that owns an extension point
/// gathers what the others put there.
///
/// ```swift
/// let widgets = try await context.contributions.values(of: .dashboardWidgets)
/// ```
public struct Contributions: Sendable {
    private let source: (any ContributionSource)?

    /// A window on `source`; with none, every point reads empty.
    package init(_ source: (any ContributionSource)? = nil) {
        self.source = source
    }

    /// The contributions to `point` visible now, in order, each with its module.
    public func callAsFunction<Content>(_ point: ExtensionPoint<Content>) -> [Contribution<Content>] {
        source?.contributions(for: point) ?? []
    }

    /// The content of every contribution to `point`, built in order.
    public func values<Content>(of point: ExtensionPoint<Content>) async throws -> [Content] {
        var values: [Content] = []
        for contribution in self(point) { values.append(try await contribution.content()) }
        return values
    }

    /// The list now, then each new one as it changes.
    public func updates<Content>(of point: ExtensionPoint<Content>) -> Feed<[Contribution<Content>]> {
        source?.updates(of: point) ?? .ended
    }
}
