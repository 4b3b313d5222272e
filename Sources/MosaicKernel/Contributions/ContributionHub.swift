internal import Mosaic
internal import Synchronization

/// The mediated contributions of a running kernel: for each extension point, the contributions of active modules
/// whose entitlement is granted, kept in the point's order.
///
/// Each point's typed list is rebuilt when a module comes or goes or the granted entitlements change, so reading a
/// point costs a lock, a dictionary lookup and a retain of the list: O(1) in the number of contributions.
/// Observers get the current list, then each new one; each observer buffers only the newest list, so a slow
/// observer skips lists it had no time for but always ends on the latest, and never holds up the kernel.
final class ContributionHub: ContributionSource {
    private struct Entry {
        let module: ModuleID
        let keys: ContributionOrder.Keys
        let entitlement: Entitlement?
        let contribution: any Sendable
    }

    private struct Point {
        let declaration: AnyExtensionPoint
        /// Every contribution of an active module, in the point's order.
        var entries: [Entry] = []
        let observers = Broadcast<any AnyObject & Sendable>()
    }

    private struct State {
        var points: [String: Point] = [:]
        /// Each point's visible contributions, a `ContributionList<Content>`; apart from `points`, so that a
        /// read copies nothing but this reference.
        var lists: [String: any AnyObject & Sendable] = [:]
        var granted: Set<Entitlement> = []
        /// The points each active module contributes to, and those with contributions gated by each entitlement,
        /// so that a change touches only the points it concerns.
        var pointsOfModule: [ModuleID: Set<String>] = [:]
        var pointsOfEntitlement: [Entitlement: Set<String>] = [:]
        var finished = false
    }

    private let state: Locked<State>
    /// Advances whenever a point's visible list or the granted entitlements change.
    let version: VersionCounter

    init(points: some Sequence<AnyExtensionPoint>, signal: Broadcast<Void>? = nil) {
        version = VersionCounter(signal: signal)
        var state = State()
        for point in points {
            state.points[point.id] = Point(declaration: point)
            state.lists[point.id] = point.makeList([])
        }
        self.state = Locked(state)
    }

    func contributions<Content>(for point: ExtensionPoint<Content>) -> [Contribution<Content>] {
        let list = state.withLock { $0.lists[point.id] }
        return (list as? ContributionList<Content>)?.items ?? []
    }

    func updates<Content>(of point: ExtensionPoint<Content>) -> Feed<[Contribution<Content>]> {
        subscription(of: point).feed
    }

    /// The list of `point` now, then each new one, until cancelled or the kernel shuts down.
    func subscription<Content>(of point: ExtensionPoint<Content>) -> Subscription<[Contribution<Content>]> {
        state.withLock { state in
            guard !state.finished, let current = state.lists[point.id],
                let observers = state.points[point.id]?.observers
            else { return .ended() }
            return observers.subscribe(buffering: .newest(1), first: current) {
                ($0 as? ContributionList<Content>)?.items
            }
        }
    }

    /// Replaces everything `module` contributed with `contributions` (bound to its services as it becomes active,
    /// or its standby contributions), in one change.
    func replace(_ module: ModuleID, _ contributions: [(ContributionDeclaration, any Sendable)]) {
        replace([(module, contributions)])
    }

    /// Replaces everything each module of `batch` contributed with its contributions, in one change: each point
    /// concerned is sorted and published once, however many modules contribute to it.
    func replace(_ batch: [(module: ModuleID, contributions: [(ContributionDeclaration, any Sendable)])]) {
        guard !batch.isEmpty else { return }
        state.withLock { state in
            var changed: Set<String> = []
            for (module, _) in batch {
                let points = state.pointsOfModule.removeValue(forKey: module) ?? []
                for id in points { state.points[id]?.entries.removeAll { $0.module == module } }
                changed.formUnion(points)
            }
            for (module, contributions) in batch {
                for (declaration, contribution) in contributions {
                    let id = declaration.point.id
                    guard state.points[id] != nil else { continue }
                    let entry = Entry(
                        module: module, keys: declaration.keys(module: module), entitlement: declaration.entitlement,
                        contribution: contribution)
                    state.points[id]?.entries.append(entry)
                    state.pointsOfModule[module, default: []].insert(id)
                    if let entitlement = declaration.entitlement {
                        state.pointsOfEntitlement[entitlement, default: []].insert(id)
                    }
                    changed.insert(id)
                }
            }
            for id in changed {
                guard let order = state.points[id]?.declaration.order else { continue }
                state.points[id]?.entries.sort { order.precedes($0.keys, $1.keys) }
                publish(id, in: &state)
            }
        }
    }

    /// The contribution `id` of `module` to the point `point` names, a `Contribution<Content>`, if it is listed.
    func contribution(of module: ModuleID, point: String, id: String) -> (any Sendable)? {
        state.withLock { state in
            state.points[point]?.entries.first { $0.module == module && $0.keys.id == id }?.contribution
        }
    }

    /// The points `module` has contributions listed in, sorted.
    func points(of module: ModuleID) -> [String] {
        state.withLock { ($0.pointsOfModule[module] ?? []).sorted() }
    }

    /// Withdraws everything `module` contributed.
    func remove(_ module: ModuleID) {
        state.withLock { state in
            for id in state.pointsOfModule.removeValue(forKey: module) ?? [] {
                state.points[id]?.entries.removeAll { $0.module == module }
                publish(id, in: &state)
            }
        }
    }

    /// Shows the contributions whose entitlement is in `granted`, and hides the others.
    func setGranted(_ granted: Set<Entitlement>) {
        state.withLock { state in
            guard state.granted != granted else { return }
            let changed = state.granted.symmetricDifference(granted)
            state.granted = granted
            version.advance()
            for id in Set(changed.flatMap { state.pointsOfEntitlement[$0] ?? [] }) { publish(id, in: &state) }
        }
    }

    /// Ends every observer's feed and lets go of every contribution: the kernel shut down (or was dropped).
    func finish() {
        let observers = state.withLock { state in
            state.finished = true
            state.lists = [:]
            defer { for id in state.points.keys { state.points[id]?.entries = [] } }
            return state.points.values.map(\.observers)
        }
        for broadcast in observers { broadcast.finish() }
    }

    /// Rebuilds the visible list of point `id` and hands it to its observers (inside the lock, so that every
    /// observer sees the lists in the order they were made).
    private func publish(_ id: String, in state: inout State) {
        guard let point = state.points[id] else { return }
        let granted = state.granted
        let visible = point.entries.filter { $0.entitlement.map(granted.contains) ?? true }
        let list = point.declaration.makeList(visible.map(\.contribution))
        state.lists[id] = list
        version.advance()
        point.observers.send(list)
    }
}
