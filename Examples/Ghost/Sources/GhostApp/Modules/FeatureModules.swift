internal import Foundation
internal import Logging
internal import Mosaic
internal import MosaicWeb

/// Weather for the favourite city: a tab, a dashboard widget, and `city?name=` links that change the city.
struct WeatherModule: Module {
    static let manifest = Manifest(
        id: "com.ghost.weather", version: "1.4.0", requires: [.module("com.ghost.location", "1.0.0"..<"2.0.0")],
        entitlements: ["weather"])
    /// `metric` (°C) or `imperial` (°F): `com.ghost.weather.units` in the host's configuration. Content reads it
    /// each time it renders, so a reloaded configuration file shows at the next render.
    static let units = ConfigurationKey<String>("units", default: "metric")

    static func register(in module: inout ModuleRegistrar) {
        module.configuration(units)
        module.publishes(FeatureOpened.self)
        module.reads(.favouriteCity)
        module.writes(.favouriteCity)
        module.services.singleton(.weatherData) { try SampleWeather() }
        module.tab("weather", priority: 90, title: "Weather", icon: "cloud.sun")
        module.contribute(to: .dashboardWidgets, id: "weather.today", priority: 100, title: "Weather") {
            (context: ActivationContext, data: any WeatherData) in
            let city = context.state[.favouriteCity]
            guard let weather = data.weather(in: city) else { return Panel(.text("No weather for \(city).")) }
            let scale = try Units(context.configuration[units])
            return Panel(
                .heading(weather.city),
                .facts([Fact("Now", "\(scale.temperature(weather.temperature)), \(weather.condition)")]),
                .list(weather.forecast))
        }
        module.contribute(to: .tabPages, id: "weather.cities", title: "Cities", tab: "weather") {
            (context: ActivationContext, data: any WeatherData) in
            let favourite = context.state[.favouriteCity]
            let scale = try Units(context.configuration[units])
            return Panel(
                blocks: data.cities.compactMap(data.weather(in:)).map { weather in
                    let mark = weather.city == favourite ? " ★" : ""
                    return .group([
                        .heading(weather.city + mark),
                        .text("\(scale.temperature(weather.temperature)), \(weather.condition)"),
                        .link(title: "Make favourite", target: context.url(for: CityRoute(name: weather.city))),
                    ])
                })
        }
        module.route(.get, "/weather/:city") { (request: WebRequest, data: any WeatherData) in
            guard let weather = request.parameters["city"].flatMap(data.weather(in:)) else {
                return .json(#"{"error":"no such city"}"#, status: 404)
            }
            return .json(String(decoding: try JSONEncoder().encode(weather), as: UTF8.self))
        }
        module.handle(CityRoute.self) { (route: CityRoute, context: ActivationContext, data: any WeatherData) in
            guard let weather = data.weather(in: route.name) else {
                throw UnknownName(.unknownCity, route.name, known: data.cities).linkError
            }
            try await context.state.transaction { transaction in
                transaction.set(.favouriteCity, to: weather.city)
                transaction.publish(FeatureOpened(feature: "weather"))
            }
        }
    }
}

/// Results for the favourite team: a tab, a widget, and `team?name=` links.
struct SportsModule: Module {
    static let manifest = Manifest(
        id: "com.ghost.sports", version: "1.0.0",
        requires: [.module("com.ghost.analytics", from: "1.0.0", optional: true)],
        entitlements: ["sports"])

    static func register(in module: inout ModuleRegistrar) {
        // Started by its first team link or the first render of its widget or page, not at boot.
        module.activation = .onDemand
        module.publishes(FeatureOpened.self)
        module.reads(.favouriteTeam)
        module.writes(.favouriteTeam)
        module.services.singleton(.sportsData) { try SampleSports() }
        module.tab("sports", priority: 80, title: "Sports", icon: "sportscourt")
        module.contribute(to: .dashboardWidgets, id: "sports.scores", priority: 80, title: "Scores") {
            (context: ActivationContext, data: any SportsData) in
            let team = context.state[.favouriteTeam]
            let games = data.games(of: team).map { "\($0.home) \($0.homeScore) – \($0.awayScore) \($0.away)" }
            return Panel(.heading(team), games.isEmpty ? .text("No games yet.") : .list(games))
        }
        module.contribute(to: .tabPages, id: "sports.teams", title: "Teams", tab: "sports") {
            (context: ActivationContext, data: any SportsData) in
            Panel(blocks: data.teams.map { .link(title: $0, target: context.url(for: TeamRoute(name: $0))) })
        }
        module.handle(TeamRoute.self) { (route: TeamRoute, context: ActivationContext, data: any SportsData) in
            guard let team = data.teams.first(where: { $0.caseInsensitiveCompare(route.name) == .orderedSame }) else {
                throw UnknownName(.unknownTeam, route.name, known: data.teams).linkError
            }
            try await context.state.transaction { transaction in
                transaction.set(.favouriteTeam, to: team)
                transaction.publish(FeatureOpened(feature: "sports"))
            }
        }
    }
}

/// A work of art each day.
struct ArtModule: Module {
    static let manifest = Manifest(id: "com.ghost.art", version: "0.9.0", entitlements: ["art"])

    static func register(in module: inout ModuleRegistrar) {
        // Started by the first render of its widget or collection, not at boot.
        module.activation = .onDemand
        module.services.singleton(.artData) { try SampleArt() }
        module.tab("art", priority: 70, title: "Art", icon: "paintpalette")
        module.contribute(to: .dashboardWidgets, id: "art.daily", priority: 60, title: "Art of the day") {
            (data: any ArtData) in
            guard !data.works.isEmpty else { return Panel(.text("No art today.")) }
            let work = data.works[daysSince1970 % data.works.count]
            return Panel(.heading(work.title), .text("\(work.artist), \(work.year)"))
        }
        module.contribute(to: .tabPages, id: "art.collection", title: "Collection", tab: "art") {
            (data: any ArtData) in Panel(.list(data.works.map { "\($0.title) — \($0.artist), \($0.year)" }))
        }
        // Answered in Art's process, which Ghost runs apart: each request crosses to it (pages are kept rendered).
        module.route(.get, "/art/today") { (_: WebRequest, data: any ArtData) in
            guard !data.works.isEmpty else { return .json(#"{"error":"no art today"}"#, status: 404) }
            let work = data.works[daysSince1970 % data.works.count]
            return .json(String(decoding: try JSONEncoder().encode(work), as: UTF8.self))
        }
    }
}

/// The home screen: greets with the favourite city and gathers the other features' widgets.
struct DashboardModule: Module {
    static let manifest = Manifest(
        id: "com.ghost.dashboard", version: "2.0.0",
        requires: [
            .module("com.ghost.weather", from: "1.0.0"), .module("com.ghost.sports", from: "1.0.0", optional: true),
            .module("com.ghost.art", optional: true),
        ])
    @Injected(.weatherData) var forecasts

    static func register(in module: inout ModuleRegistrar) {
        module.reads(.favouriteCity)
        module.tab("dashboard", priority: 100, title: "Dashboard", icon: "square.grid.2x2")
        module.contribute(to: .dashboard, id: "dashboard.greeting", priority: 100, title: "Welcome") {
            (context: ActivationContext) in
            Panel(
                .heading("Good day"), .text("Showing \(context.state[.favouriteCity]). Open a city link to change it."))
        }
    }

    func activate(_ context: ActivationContext) async throws {
        let city = context.state[.favouriteCity]
        let known = try forecasts().weather(in: city) != nil
        context.logger.debug("dashboard ready", metadata: ["city": "\(city)", "known": "\(known)"])
    }
}

/// Days since 1970: the art of the day changes daily and stays the same all day.
var daysSince1970: Int { Int(Date().timeIntervalSince1970 / 86_400) }

/// How Weather shows temperatures (the samples are in °C).
enum Units {
    case metric, imperial

    /// The units `name` names; any other value fails the content with the fix, so a typo shows on the widget.
    init(_ name: String) throws {
        switch name {
        case "metric": self = .metric
        case "imperial": self = .imperial
        default:
            throw ConfigurationProblem(
                "com.ghost.weather.units is “\(name)”; set it to metric or imperial (--set, the environment or the file)."
            )
        }
    }

    /// `celsius` in these units, with its sign.
    func temperature(_ celsius: Int) -> String {
        switch self {
        case .metric: "\(celsius)°C"
        case .imperial: "\(Int((Double(celsius) * 9 / 5 + 32).rounded()))°F"
        }
    }
}

/// A configuration value the module cannot use.
struct ConfigurationProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
