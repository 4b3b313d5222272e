internal import Mosaic

extension Kernel {
    /// The event bus and shared state module `id` gets: the kernel's hubs as the module sees them, or, in an
    /// isolated module's process, handles that reach its host's through them.
    nonisolated func handles(
        of id: ModuleID, ledger: ModuleLedger, services: Services, declaredWrites: Set<String>
    ) -> (Events, SharedState) {
        let state = ModuleStateAccess(hub: stateHub, ledger: ledger, declaredWrites: declaredWrites)
        let events = ModuleEventBus(hub: eventHub, ledger: ledger, services: services, state: state)
        guard let sharing = options.isolation.sharing else {
            return (Events(bus: events, module: id), SharedState(store: state, module: id))
        }
        return (
            Events(bus: MirroredEventBus(local: events, sharing: sharing), module: id),
            SharedState(store: MirroredStateAccess(local: state, sharing: sharing), module: id)
        )
    }
}
