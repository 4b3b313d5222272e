internal import Mosaic
internal import Synchronization

/// The on-demand modules waiting on standby that declared they subscribe to an event type: a publish of that type
/// starts them. The event that starts one is not delivered to it in memory (it subscribes as it activates); a
/// durable event is, through its durable handler, once that handler was registered by an earlier start.
final class StandbySubscribers: Sendable {
    private struct State {
        var modules: [String: Set<ModuleID>] = [:]
        var starter: (@Sendable (ModuleID, String) async -> Void)?
    }

    private let state = Locked(State())
    /// Whether any module waits for an event: a publish checks only this when none does.
    private let isWaiting = Atomic<Bool>(false)

    /// Sets what starts a module on standby for a use.
    func setStarter(_ starter: @escaping @Sendable (ModuleID, String) async -> Void) {
        state.withLock { $0.starter = starter }
    }

    /// Records that `module`, which subscribes to the event types `types` names, waits on standby, or no longer.
    func set(_ module: ModuleID, subscribingTo types: [String], isOnStandby: Bool) {
        guard !types.isEmpty else { return }
        state.withLock { state in
            for type in types {
                if isOnStandby {
                    state.modules[type, default: []].insert(module)
                } else {
                    state.modules[type]?.remove(module)
                    if state.modules[type]?.isEmpty == true { state.modules[type] = nil }
                }
            }
            isWaiting.store(!state.modules.isEmpty, ordering: .relaxed)
        }
    }

    /// Starts the modules on standby that subscribe to `Event`, without waiting for them. Each is started once: it
    /// leaves the type's list here, so that a burst of events does not queue a start per event.
    func start<Event>(for _: Event.Type) {
        guard isWaiting.load(ordering: .relaxed) else { return }
        let name = qualifiedTypeName(Event.self)
        let (modules, starter) = state.withLock { state in
            defer {
                if state.starter != nil { state.modules[name] = nil }
                isWaiting.store(!state.modules.isEmpty, ordering: .relaxed)
            }
            return (state.modules[name] ?? [], state.starter)
        }
        guard let starter, !modules.isEmpty else { return }
        for module in modules {
            Task { await starter(module, "an event \(name)") }
        }
    }
}
