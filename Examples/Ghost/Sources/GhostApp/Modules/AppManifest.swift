public import Mosaic

/// The platform modules every Ghost build has.
public enum CoreModules: ModuleGroup {
    /// Location, Analytics and Settings.
    public static let modules: [any Module.Type] = [LocationModule.self, AnalyticsModule.self, SettingsModule.self]
}

/// The feature modules, each owned by a feature team; adding a feature is one line here.
public enum FeatureModules: ModuleGroup {
    /// Weather, Art, Sports and Dashboard.
    public static let modules: [any Module.Type] = [
        WeatherModule.self, ArtModule.self, SportsModule.self, DashboardModule.self,
    ]
}

/// Everything Ghost runs.
public enum AppManifest {
    /// The groups, in order.
    public static let groups: [any ModuleGroup.Type] = [CoreModules.self, FeatureModules.self]

    /// The host Ghost is: its version, the features it offers and the scheme of its links.
    public static let host = HostEnvironment(version: "2.3.0", features: ["location"], schemes: [scheme])

    /// The entitlements a default install grants.
    public static let defaultEntitlements: Set<Entitlement> = ["weather", "sports", "art"]

    /// The scheme of Ghost's links.
    public static let scheme = "ghost"
}
