internal import Mosaic
internal import Synchronization

/// Routes links to the handlers of active modules. A link whose handler belongs to a module on its way up waits,
/// up to a limit in number and time, and is delivered when the module activates; a link whose module is blocked,
/// failed or deactivated (it cannot come up by waiting) is answered at once with the reason.
///
/// Finding a handler is two dictionary lookups under a lock; the navigator and the handler run in the caller's
/// task, outside the lock.
final class DeeplinkRouter: Sendable {
    struct RouteKey: Hashable {
        let feature: String
        let action: String?
    }

    struct Route {
        let module: ModuleID
        let entitlement: Entitlement?
        /// Whether the handler was declared to change nothing (`navigatesOnly`).
        let navigatesOnly: Bool
        let handle: @Sendable (Deeplink) async throws -> Void
    }

    struct Waiting {
        let key: RouteKey
        let continuation: CheckedContinuation<Result<Route, DeeplinkError>?, Never>
        /// Ends the wait at its time limit; cancelled when the link is delivered first.
        var timer: Task<Void, Never>?
    }

    struct State {
        var routes: [RouteKey: Route] = [:]
        /// Which module handles each route, active or not: a link for a module that is not active waits for it.
        var owners: [RouteKey: ModuleID] = [:]
        /// Why each module that cannot come up by waiting is down.
        var unavailable: [ModuleID: String] = [:]
        /// The on-demand modules waiting on standby: a link to one starts it.
        var standby: Set<ModuleID> = []
        /// What starts a module on standby for a use (the kernel's `start`), once the kernel runs.
        var starter: (@Sendable (ModuleID, String) async -> Void)?
        var granted: Set<Entitlement> = []
        var waiting: [Int: Waiting] = [:]
        var nextWaiting = 0
        var finished = false
    }

    let state = Locked(State())
    private let navigator: @Sendable (String) async -> Void
    let pendingLimit: Int
    let pendingTimeLimit: Duration
    let clock: KernelClock
    let telemetry: Telemetry

    init(
        navigator: @escaping @Sendable (String) async -> Void, pendingLimit: Int, pendingTimeLimit: Duration,
        clock: KernelClock, telemetry: Telemetry
    ) {
        self.telemetry = telemetry
        self.navigator = navigator
        self.pendingLimit = pendingLimit
        self.pendingTimeLimit = pendingTimeLimit
        self.clock = clock
    }

    /// Records who handles what in the graph (validated: one module per route).
    func setOwners(_ owners: [RouteKey: ModuleID]) {
        state.withLock { $0.owners = owners }
    }

    /// Records why `module` cannot come up by waiting (`nil`: it is active or on its way up), and answers the
    /// links waiting for it at once.
    func setUnavailable(_ module: ModuleID, reason: String?) {
        let answered = state.withLock { state -> [(Waiting, DeeplinkError)] in
            state.unavailable[module] = reason
            guard reason != nil else { return [] }
            var answered: [(Waiting, DeeplinkError)] = []
            for (token, waiting) in state.waiting {
                guard case .refuse(let error) = Self.find(waiting.key, in: state) else { continue }
                state.waiting[token] = nil
                answered.append((waiting, error))
            }
            return answered
        }
        for (waiting, error) in answered {
            waiting.timer?.cancel()
            waiting.continuation.resume(returning: .failure(error))
        }
    }

    /// Records whether `module` waits on standby.
    func setStandby(_ module: ModuleID, _ isOnStandby: Bool) {
        state.withLock { state in
            if isOnStandby { state.standby.insert(module) } else { state.standby.remove(module) }
        }
    }

    /// Sets what starts a module on standby for a link.
    func setStarter(_ starter: @escaping @Sendable (ModuleID, String) async -> Void) {
        state.withLock { $0.starter = starter }
    }

    func setGranted(_ granted: Set<Entitlement>) {
        state.withLock { $0.granted = granted }
    }

    /// Makes `module`'s routes live and delivers the links waiting for them.
    func activate(_ module: ModuleID, _ routes: [(RouteKey, Route)]) {
        guard !routes.isEmpty else { return }
        let released = state.withLock { state in
            for (key, route) in routes { state.routes[key] = route }
            let ready = state.waiting.filter {
                Self.lookup($0.value.key, in: state.routes, owners: state.owners) != nil
            }
            for token in ready.keys { state.waiting[token] = nil }
            return ready.values.map { ($0, Self.lookup($0.key, in: state.routes, owners: state.owners)) }
        }
        for (waiting, route) in released {
            waiting.timer?.cancel()
            waiting.continuation.resume(returning: route.map { .success($0) })
        }
    }

    /// Whether any live route is `module`'s.
    func hasRoutes(of module: ModuleID) -> Bool {
        state.withLock { $0.routes.values.contains { $0.module == module } }
    }

    func deactivate(_ module: ModuleID) {
        state.withLock { state in state.routes = state.routes.filter { $0.value.module != module } }
    }

    /// Ends every wait: the kernel shut down.
    func finish() {
        let waiting = state.withLock { state in
            state.finished = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for entry in waiting {
            entry.timer?.cancel()
            entry.continuation.resume(returning: nil)
        }
    }

    /// Navigates to the link's tab and runs its handler, waiting for the handler's module if need be. With
    /// `navigationOnly`, a handler not declared `navigatesOnly` is not run (nor the tab navigated to): the link is
    /// answered `needsConfirmation`. The decision is made on the route the link really reaches.
    func dispatch(_ link: Deeplink, navigationOnly: Bool) async -> DeeplinkResult {
        guard let feature = link.feature else {
            await navigator(link.tab)
            return .handled(tab: link.tab, module: nil)
        }
        let key = RouteKey(feature: feature, action: link.action)
        let found: Result<Route, DeeplinkError>
        switch state.withLock({ Self.find(key, in: $0) }) {
        case .route(let route): found = .success(route)
        case .wait:
            await startOwner(of: key, for: link)
            found = await wait(for: key, link)
        case .refuse(let error): found = .failure(error)
        }
        switch found {
        case .failure(let error):
            return .notHandled(error)
        case .success(let route):
            if navigationOnly, !route.navigatesOnly {
                return .notHandled(
                    DeeplinkError(
                        .needsConfirmation, "\(route.module)'s handler for \(link) may change the app's state.",
                        fix: "Ask before opening it (a host opens such links by POST), or declare the handler "
                            + "navigatesOnly if it changes nothing."))
            }
            if let entitlement = route.entitlement, !state.withLock({ $0.granted.contains(entitlement) }) {
                return .notHandled(
                    DeeplinkError(
                        .notEntitled, "\(link) needs the entitlement \(entitlement), which is not granted.",
                        fix: "Grant \(entitlement) to open links to \(feature)."))
            }
            await navigator(link.tab)
            do {
                try await route.handle(link)
                return .handled(tab: link.tab, module: route.module)
            } catch {
                // A handler that rejects the link itself (a missing or invalid parameter) keeps that code, so a host
                // can tell the client's mistake from the handler's fault.
                if (error as? StateError)?.code == .unavailable || (error as? EventError)?.code == .unavailable {
                    return .notHandled(
                        DeeplinkError(
                            .storageUnavailable,
                            "\(route.module)'s handler for \(link) could not store its change: \(error)",
                            fix: "Open the link again once the storage answers."))
                }
                return .notHandled(
                    DeeplinkError(
                        (error as? DeeplinkError)?.code ?? .handlerFailed,
                        "\(route.module)'s handler for \(link) threw: \(error)",
                        fix: "Fix the handler in \(route.module), or the link's parameters."))
            }
        }
    }

    /// Starts the module that handles `key` when it waits on standby; the link then waits for it as for any module
    /// on its way up, and is refused with the reason if it fails.
    private func startOwner(of key: RouteKey, for link: Deeplink) async {
        let (owner, starter) = state.withLock { state in
            let owner = Self.lookup(key, in: state.owners, owners: state.owners)
            return (owner.flatMap { state.standby.contains($0) ? $0 : nil }, state.starter)
        }
        guard let owner, let starter else { return }
        await starter(owner, "a link to \(key.feature)\(key.action.map { "/\($0)" } ?? "")")
    }

    /// What a lookup found.
    enum Lookup {
        /// The live route.
        case route(Route)
        /// The route's module is on its way up: the link may wait for it.
        case wait
        /// Nothing will handle the link by waiting, for this reason.
        case refuse(DeeplinkError)
    }

    /// The live route for `key`, or whether waiting may bring one.
    static func find(_ key: RouteKey, in state: State) -> Lookup {
        if let route = lookup(key, in: state.routes, owners: state.owners) { return .route(route) }
        let owner = lookup(key, in: state.owners, owners: state.owners)
        guard let owner else {
            let features = Set(state.owners.keys.map(\.feature)).sorted()
            return .refuse(
                DeeplinkError(
                    .noHandler,
                    "No module handles \(key.feature)\(key.action.map { "/\($0)" } ?? "").",
                    fix: features.isEmpty
                        ? "Add a module that handles it."
                        : "Link to a handled feature: \(features.joined(separator: ", "))."))
        }
        guard let reason = state.unavailable[owner] else { return .wait }
        return .refuse(
            DeeplinkError(
                .moduleInactive, "\(owner), which handles \(key.feature), is not active: it is \(reason).",
                fix: "Activate \(owner) (grant its entitlements, fix its dependencies), then open the link again."))
    }

    /// The route template `key` reaches (`feature/action`, or `feature/*` for a feature's catch-all) and its
    /// module, when a module handles it; never a value only the link supplied.
    func template(of key: RouteKey) -> (template: String, module: ModuleID)? {
        state.withLock { state in
            if let owner = state.owners[key] { return ("\(key.feature)/\(key.action ?? "*")", owner) }
            let feature = RouteKey(feature: key.feature, action: nil)
            return state.owners[feature].map { ("\(key.feature)/*", $0) }
        }
    }

    /// The entry for `key`'s feature and action, else for its feature as a whole; never the feature's when the
    /// exact key has an owner, so a link never reaches another module's catch-all while its own module is down.
    static func lookup<Value>(
        _ key: RouteKey, in table: [RouteKey: Value], owners: [RouteKey: ModuleID]
    ) -> Value? {
        if let exact = table[key] { return exact }
        guard owners[key] == nil else { return nil }
        return table[RouteKey(feature: key.feature, action: nil)]
    }
}
