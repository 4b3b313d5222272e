public import Mosaic

extension Kernel {
    /// The contributions to `point` of the active modules whose entitlement is granted, in the point's order, each
    /// with the module that made it. O(1): the list is kept ready as modules come and go.
    ///
    /// ```swift
    /// for widget in kernel.contributions(for: .dashboardWidgets) {
    ///     render(widget.metadata.title, try await widget.content())
    /// }
    /// ```
    public nonisolated func contributions<Content>(for point: ExtensionPoint<Content>) -> [Contribution<Content>] {
        contributionStore.contributions(for: point)
    }

    /// The list of `point` now, then each new list whenever a module activates or deactivates or an entitlement
    /// changes, until ``shutdown()``. A slow observer skips to the newest list rather than queueing old ones.
    public nonisolated func updates<Content>(of point: ExtensionPoint<Content>) -> AsyncStream<[Contribution<Content>]>
    {
        contributionStore.updates(of: point)
    }

    /// Every extension point's contributions, as modules see them.
    public nonisolated var allContributions: Contributions { Contributions(contributionStore) }
}
