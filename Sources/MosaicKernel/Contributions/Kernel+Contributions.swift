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
        contributionHub.contributions(for: point)
    }

    /// The list of `point` now, then each new list whenever a module activates or deactivates or an entitlement
    /// changes, until ``shutdown()``. A slow observer skips to the newest list rather than queueing old ones.
    public nonisolated func updates<Content>(of point: ExtensionPoint<Content>) -> Feed<[Contribution<Content>]> {
        contributionHub.updates(of: point)
    }

    /// Every extension point's contributions, as modules see them.
    public nonisolated var allContributions: Contributions { Contributions(contributionHub) }
}

extension Kernel {
    /// The versions of what a host renders: the contribution lists, the modules' states and shared state. Read
    /// without waiting for the kernel; take them before a render, so that a change during it shows as a change.
    package nonisolated var renderVersions: RenderVersions {
        RenderVersions(
            contributions: contributionHub.version.current, modules: moduleVersion.current,
            state: stateHub.writes.current)
    }

    /// Whether every shared-state key in `reads` (a ``StateReads`` record) still has the version that was read.
    package nonisolated func isUnchanged(_ reads: [String: UInt64]) -> Bool {
        reads.isEmpty || stateHub.isUnchanged(reads)
    }

    /// One element now and one after each change of ``renderVersions`` (a slow reader gets one for many changes),
    /// until ``shutdown()``.
    package nonisolated func renderChanges() -> Feed<Void> {
        renderSignal.subscribe(buffering: .newest(1), first: ()).feed
    }
}
