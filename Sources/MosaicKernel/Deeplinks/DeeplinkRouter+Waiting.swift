internal import Mosaic
internal import Synchronization

/// Links whose module is on its way up: each waits, up to ``DeeplinkRouter/pendingLimit`` links at once and
/// ``DeeplinkRouter/pendingTimeLimit`` each, and is delivered when the module activates.
extension DeeplinkRouter {
    /// Waits for the module of `key` to activate, within the limits.
    func wait(for key: RouteKey, _ link: Deeplink) async -> Result<Route, DeeplinkError> {
        let limit = pendingLimit
        let token: Int? = state.withLock { state in
            guard !state.finished, state.waiting.count < limit else { return nil }
            defer { state.nextWaiting += 1 }
            return state.nextWaiting
        }
        guard let token else {
            return .failure(
                DeeplinkError(
                    .pendingLimit, "\(limit) links are already waiting for their modules; \(link) was dropped.",
                    fix: "Open it again once the app has started."))
        }
        let route = await withCheckedContinuation { continuation in
            let ready: Result<Route, DeeplinkError>?? = state.withLock { state in
                switch Self.find(key, in: state) {
                case .route(let route): return .some(.success(route))
                case .refuse(let error): return .some(.failure(error))
                case .wait: break
                }
                if state.finished { return .some(nil) }
                // Registered before the timer starts, so an early expiry always finds the wait.
                state.waiting[token] = Waiting(key: key, continuation: continuation)
                return .none
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            let timer = Task { [pendingTimeLimit, clock] in
                try? await clock.sleep(clock.now() + pendingTimeLimit)
                if !Task.isCancelled { self.expire(token) }
            }
            state.withLock { $0.waiting[token]?.timer = timer }
        }
        guard let route else {
            let owner = state.withLock { Self.lookup(key, in: $0.owners, owners: $0.owners) }
            return .failure(
                DeeplinkError(
                    .moduleInactive,
                    "\(owner.map { "\($0)" } ?? "The module handling \(key.feature)") did not become active within "
                        + "\(pendingTimeLimit), so \(link) was not delivered.",
                    fix: "Check why it is not active in the boot report, then open the link again."))
        }
        return route
    }

    private func expire(_ token: Int) {
        let waiting = state.withLock { $0.waiting.removeValue(forKey: token) }
        // `nil`: the time limit passed.
        waiting?.continuation.resume(returning: nil)
    }
}
