internal import Mosaic
internal import MosaicWeb

/// Where the user is; a platform service other modules build on.
struct LocationModule: Module {
    static let manifest = Manifest(
        id: "com.ghost.location", version: "1.2.0",
        compatibility: Compatibility(features: ["location"]))

    static func register(in module: inout ModuleRegistrar) {
        module.services.singleton(.location) { FixedLocation() }
    }
}

/// Counts what people open (the durable `FeatureOpened` events features publish) into shared state, each event
/// exactly once across every instance, retry and crash, and shows the counts: a sidebar item (Forsetti's example)
/// and a settings panel.
struct AnalyticsModule: Module {
    static let manifest = Manifest(id: "com.ghost.analytics", version: "1.0.0")

    static func register(in module: inout ModuleRegistrar) {
        module.subscribes(to: FeatureOpened.self)
        module.reads(.usage)
        module.writes(.usage)
        module.contribute(to: .sidebar, id: "analytics", priority: 10, title: "Analytics", icon: "chart.bar") {
            (context: ActivationContext) in
            NavigationItem(
                target: context.url(forTab: "settings"), badge: "\(context.state[.usage].values.reduce(0, +))")
        }
        // Marks every response, so an operator sees analytics is in the path (and its absence when it is not).
        module.middleware("analytics.header") { request, next in
            var response = try await next(request)
            response.headers["X-Ghost-Analytics"] = "on"
            return response
        }
        module.contribute(to: .settings, id: "analytics.usage", title: "Usage") { (context: ActivationContext) in
            let counts = context.state[.usage].sorted { $0.key < $1.key }
            return counts.isEmpty
                ? Panel(.text("Nothing opened yet."))
                : Panel(.facts(counts.map { Fact($0.key, "\($0.value)") }))
        }
    }

    func activate(_ context: ActivationContext) async throws {
        // The count commits with the delivery's completion, so a redelivered event finds itself counted already.
        try await context.events.handle(FeatureOpened.self, as: "count-opens") { envelope, transaction in
            transaction.update(.usage) { $0[envelope.event.feature, default: 0] += 1 }
        }
    }
}

/// The settings a person changes in the app itself; the host's own settings (entitlements) sit beside them.
struct SettingsModule: Module {
    static let manifest = Manifest(id: "com.ghost.settings", version: "1.0.0")

    static func register(in module: inout ModuleRegistrar) {
        module.reads(.favouriteCity)
        module.reads(.favouriteTeam)
        module.tab("settings", priority: 10, title: "Settings", icon: "gear")
        module.contribute(to: .settings, id: "settings.favourites", title: "Favourites") {
            (context: ActivationContext) in
            Panel(
                .facts([
                    Fact("City", context.state[.favouriteCity]), Fact("Team", context.state[.favouriteTeam]),
                ]),
                .text("Open a city or team link to change them."))
        }
    }
}
