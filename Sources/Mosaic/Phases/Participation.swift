/// Work a module runs in a lifecycle phase, with its context.
public struct PhaseParticipant: Sendable {
    public let phase: LifecyclePhase
    package let run: @Sendable (ActivationContext) async throws -> Void
}

/// How a module reacts to a kind of host event, with its context.
public struct HostEventListener: Sendable {
    public let kind: HostEvent.Kind
    package let handle: @Sendable (HostEvent, ActivationContext) async throws -> Void
}

extension ModuleRegistrar {
    /// Runs `work` each time the host triggers `phase`, after the modules this one depends on ran theirs.
    ///
    /// ```swift
    /// module.participate(in: .backgroundRefresh) { context in
    ///     try await context.services.resolve((any ForecastService).self).refresh()
    /// }
    /// ```
    public mutating func participate(
        in phase: LifecyclePhase, _ work: @escaping @Sendable (ActivationContext) async throws -> Void
    ) {
        participants.append(PhaseParticipant(phase: phase, run: work))
    }

    /// Calls `handle` when the host sends an event of `kind` while this module is active.
    public mutating func listen(
        to kind: HostEvent.Kind, _ handle: @escaping @Sendable (HostEvent, ActivationContext) async throws -> Void
    ) {
        listeners.append(HostEventListener(kind: kind, handle: handle))
    }
}
