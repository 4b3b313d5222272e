/// Work a module runs in a lifecycle phase, with its context.
package struct PhaseParticipant: Sendable {
    package let phase: LifecyclePhase
    package let run: @Sendable (ActivationContext) async throws -> Void
}

/// How a module reacts to a kind of host event, with its context.
package struct HostEventListener: Sendable {
    package let kind: HostEvent.Kind
    package let handle: @Sendable (HostEvent, ActivationContext) async throws -> Void
}

extension ModuleRegistrar {
    /// Runs `work` each time the host triggers `phase`, after the modules this one depends on ran theirs.
    ///
    /// ```swift
    /// module.participate(in: .backgroundRefresh) { context in try await refresh(context) }
    /// ```
    public mutating func participate(
        in phase: LifecyclePhase, _ work: @escaping @Sendable (ActivationContext) async throws -> Void
    ) {
        participants.append(PhaseParticipant(phase: phase, run: work))
    }

    /// Runs `work` each time the host triggers `phase`; its parameters are injected as a contribution's are: the
    /// module's ``ActivationContext``, or services.
    ///
    /// ```swift
    /// module.participate(in: .backgroundRefresh) { (forecasts: any ForecastService) in try await forecasts.refresh() }
    /// ```
    public mutating func participate<each Parameter: Sendable>(
        in phase: LifecyclePhase, _ work: @escaping @Sendable (repeat each Parameter) async throws -> Void
    ) {
        _ = declareInjected(repeat (each Parameter).self)
        participate(in: phase) { context in
            try await Self.awaitArguments(context, repeat (each Parameter).self)
            try await work(repeat try Self.argument((each Parameter).self, context))
        }
    }

    /// Calls `handle` when the host sends an event of `kind` while this module is active.
    public mutating func listen(
        to kind: HostEvent.Kind, _ handle: @escaping @Sendable (HostEvent, ActivationContext) async throws -> Void
    ) {
        listeners.append(HostEventListener(kind: kind, handle: handle))
    }

    /// Calls `handle` when the host sends an event of `kind` while this module is active; its other parameters are
    /// injected as a contribution's are: the module's ``ActivationContext``, or services.
    public mutating func listen<each Parameter: Sendable>(
        to kind: HostEvent.Kind, _ handle: @escaping @Sendable (HostEvent, repeat each Parameter) async throws -> Void
    ) {
        _ = declareInjected(repeat (each Parameter).self)
        listen(to: kind) { event, context in
            try await Self.awaitArguments(context, repeat (each Parameter).self)
            try await handle(event, repeat try Self.argument((each Parameter).self, context))
        }
    }
}
