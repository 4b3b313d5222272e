internal import Logging
public import Mosaic

/// The platform modules every Ghost build has.
public enum CoreModules: ModuleGroup {
    public static let modules: [any Module.Type] = [LocationModule.self, AnalyticsModule.self]
}

/// The feature modules, each owned by a feature team; adding a feature is one line here.
public enum FeatureModules: ModuleGroup {
    public static let modules: [any Module.Type] = [
        WeatherModule.self, ArtModule.self, SportsModule.self, DashboardModule.self,
    ]
}

/// Everything Ghost runs.
public enum AppManifest {
    /// The groups, in order.
    public static let groups: [any ModuleGroup.Type] = [CoreModules.self, FeatureModules.self]

    /// The host Ghost is: its version and the features it offers.
    public static let host = HostEnvironment(version: "2.3.0", features: ["location"])

    /// The entitlements a default install grants.
    public static let defaultEntitlements: Set<Entitlement> = ["weather", "sports", "art"]
}

/// Where the user is; a platform service other modules build on.
public struct LocationModule: Module {
    public static let manifest = Manifest(
        id: "com.ghost.location", version: "1.2.0",
        compatibility: Compatibility(features: ["location"]))
    public init() {}

    public static func register(in module: inout ModuleRegistrar) {
        module.services.singleton((any LocationService).self) { FixedLocation() }
    }
}

/// Counts what people use, and shows the counts from the sidebar (Forsetti's example).
public struct AnalyticsModule: Module {
    public static let manifest = Manifest(id: "com.ghost.analytics", version: "1.0.0")
    public init() {}

    public static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .sidebar, id: "analytics", priority: 10, title: "Analytics", icon: "chart.bar") {
            NavigationItem(target: "ghost://analytics")
        }
    }
}

/// Forecasts for the user's city.
public struct WeatherModule: Module {
    public static let manifest = Manifest(
        id: "com.ghost.weather", version: "1.4.0",
        requires: [.module("com.ghost.location", "1.0.0"..<"2.0.0")],
        entitlements: ["weather"])
    public init() {}

    public static func register(in module: inout ModuleRegistrar) {
        module.services.singleton((any ForecastService).self) { (location: any LocationService) in
            SampleForecasts(location: location)
        }
        module.contribute(to: .tabs, id: "weather", priority: 90, title: "Weather", icon: "cloud.sun") {
            NavigationItem(target: "ghost://weather")
        }
        module.contribute(to: .dashboardWidgets, id: "weather.today", priority: 100, title: "Weather") {
            (forecasts: any ForecastService, location: any LocationService) in
            Panel(.heading("Today"), .text(forecasts.headline(for: location.city)))
        }
    }

    public func activate(_ context: ActivationContext) async throws {
        context.logger.debug("weather ready")
    }
}

/// Art of the day.
public struct ArtModule: Module {
    public static let manifest = Manifest(id: "com.ghost.art", version: "0.9.0", entitlements: ["art"])
    public init() {}

    public static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .tabs, id: "art", priority: 70, title: "Art", icon: "paintpalette") {
            NavigationItem(target: "ghost://art")
        }
        module.contribute(to: .dashboardWidgets, id: "art.daily", priority: 60, title: "Art of the day") {
            Panel(.text("The Great Wave off Kanagawa, Hokusai"))
        }
    }
}

/// Scores for the user's teams.
public struct SportsModule: Module {
    public static let manifest = Manifest(
        id: "com.ghost.sports", version: "1.0.0",
        requires: [.module("com.ghost.analytics", from: "1.0.0", optional: true)],
        entitlements: ["sports"])
    public init() {}

    public static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .tabs, id: "sports", priority: 80, title: "Sports", icon: "sportscourt") {
            NavigationItem(target: "ghost://sports")
        }
        module.contribute(to: .dashboardWidgets, id: "sports.scores", priority: 80, title: "Scores") {
            Panel(.facts([Fact("Bulls", "102"), Fact("Celtics", "99")]))
        }
    }
}

/// The home screen that gathers the other features' widgets.
public struct DashboardModule: Module {
    public static let manifest = Manifest(
        id: "com.ghost.dashboard", version: "2.0.0",
        requires: [
            .module("com.ghost.weather", from: "1.0.0"),
            .module("com.ghost.sports", from: "1.0.0", optional: true),
            .module("com.ghost.art", optional: true),
        ])
    @Injected var forecasts: any ForecastService
    @Injected var location: any LocationService
    public init() {}

    public static func register(in module: inout ModuleRegistrar) {
        module.services.use((any ForecastService).self)
        module.services.use((any LocationService).self)
        module.contribute(to: .tabs, id: "dashboard", priority: 100, title: "Dashboard", icon: "square.grid.2x2") {
            NavigationItem(target: "ghost://dashboard")
        }
    }

    public func activate(_ context: ActivationContext) async throws {
        context.logger.notice("dashboard ready", metadata: ["headline": "\(forecasts.headline(for: location.city))"])
    }
}
