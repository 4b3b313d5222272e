internal import Mosaic
internal import MosaicWeb
internal import Synchronization

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
/// once across every instance and every retry, and shows the counts: a sidebar item (Forsetti's example) and a
/// settings panel.
struct AnalyticsModule: Module {
    static let manifest = Manifest(id: "com.ghost.analytics", version: "1.0.0")

    static func register(in module: inout ModuleRegistrar) {
        module.subscribes(to: FeatureOpened.self)
        module.reads(.usage)
        module.writes(.usage)
        module.writes(.countedOpens)
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
        // One instance at a time counts each event; it is delivered at least once, so the event's id is written
        // with the count, in one transaction, and an id already counted changes nothing.
        try await context.events.handle(FeatureOpened.self, as: "count-opens") { envelope in
            let seen = SeenBefore()
            try await context.state.transaction { transaction in
                // The changes run in this order, and again in this order should another instance write first.
                transaction.update(.countedOpens) { counted in
                    seen.set(counted.contains(envelope.id))
                    guard !seen.value else { return }
                    counted = Array((counted + [envelope.id]).suffix(1_000))
                }
                transaction.update(.usage) { usage in
                    if !seen.value { usage[envelope.event.feature, default: 0] += 1 }
                }
            }
        }
    }
}

/// Whether the event being counted was counted before: what the first change of the transaction found, for the
/// second, which runs right after it.
private final class SeenBefore: Sendable {
    private let seen = Atomic(false)
    var value: Bool { seen.load(ordering: .acquiring) }
    func set(_ value: Bool) { seen.store(value, ordering: .releasing) }
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
