@_spi(Hosting) public import Mosaic

extension Kernel {
    /// Opens a link from outside: parses it under ``KernelOptions/deeplinkRules``, navigates to its tab with the
    /// host's navigator, then awaits the handler of its feature and action. A link whose module is not active yet
    /// waits for it (within ``KernelOptions/pendingDeeplinkLimit`` and ``KernelOptions/pendingDeeplinkTimeLimit``).
    /// Never throws: a bad or unhandled link comes back as `DeeplinkResult.notHandled(_:)` with the reason.
    public nonisolated func open(_ text: String) async -> DeeplinkResult {
        let link: Deeplink
        do {
            link = try Deeplink(parsing: text, rules: linkRules)
        } catch {
            return .notHandled(error)
        }
        return await open(link)
    }

    /// Opens a parsed or built link; one whose scheme the host does not accept is not handled.
    public nonisolated func open(_ link: Deeplink) async -> DeeplinkResult {
        do {
            try linkRules.check(scheme: link.scheme)
        } catch {
            return .notHandled(error)
        }
        return await deeplinkRouter.open(link)
    }

    /// Opens a link only if it changes nothing: one naming no feature, or whose handler (the one the link really
    /// reaches) was declared `navigatesOnly`. Any other link is not run and is answered
    /// `DeeplinkResult.notHandled(_:)` with code `needsConfirmation`: what a host uses for links that arrive by
    /// `GET`, which another site can make a browser send.
    public nonisolated func openNavigationOnly(_ link: Deeplink) async -> DeeplinkResult {
        do {
            try linkRules.check(scheme: link.scheme)
        } catch {
            return .notHandled(error)
        }
        return await deeplinkRouter.open(link, navigationOnly: true)
    }

    /// ``KernelOptions/deeplinkRules`` with the host's own schemes when the options name none.
    nonisolated var linkRules: DeeplinkRules {
        var rules = options.deeplinkRules
        if rules.allowedSchemes.isEmpty { rules.allowedSchemes = host.schemes }
        return rules
    }

    /// The route a handler of module `id` serves, run as a call of the module (with its services, and awaited
    /// before the module's `deactivate()` runs).
    static func route(
        _ handler: DeeplinkHandler, of id: ModuleID, _ context: ActivationContext
    ) -> (DeeplinkRouter.RouteKey, DeeplinkRouter.Route) {
        let key = DeeplinkRouter.RouteKey(feature: handler.feature, action: handler.action)
        let route = DeeplinkRouter.Route(
            module: id, entitlement: handler.entitlement, navigatesOnly: handler.navigatesOnly
        ) { link in
            try await context.call { try await handler.handle(link, context) }
        }
        return (key, route)
    }
}

extension Kernel {
    /// The host's handle on the event bus: it publishes as `mosaic.host` and may subscribe to any event type.
    public nonisolated var events: Events { Events(bus: eventHub, module: EventHub.host) }
}

extension Kernel {
    /// The host's handle on shared state: it may write every key.
    public nonisolated var sharedState: SharedState { SharedState(store: stateHub, module: StateHub.host) }
}
