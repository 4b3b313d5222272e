import Mosaic
import MosaicKernel
import Synchronization
import Testing

/// `ghost://dashboard/forecast/show?day=…`: the README's example route.
struct ForecastRoute: DeeplinkRoute {
    static let tab = "dashboard", feature = "forecast"
    static let action: String? = "show"
    var day: String
    var hours: Int?
}

/// What `ForecastModule`'s link handler saw.
let forecastDays = Locked<[String]>([])

// The README's ten-line module: one service, one dashboard contribution, one link handler.
struct ForecastModule: Module {
    static let manifest = Manifest(id: "com.app.forecast", version: "1.0.0", entitlements: ["weather"])
    static func register(in module: inout ModuleRegistrar) {
        module.services.singleton(.forecast) { PreviewForecast() }
        module.contribute(to: .dashboard, id: "forecast") { (forecast: any Forecast) in
            Panel(.text(forecast.text))
        }
        module.handle(ForecastRoute.self) { (route: ForecastRoute, forecast: any Forecast) in
            forecastDays.withLock { $0.append("\(route.day): \(forecast.text)") }
        }
    }
}

@Suite(.serialized) struct AuthorAPITests {
    @Test("the README's ten-line module serves its service, its panel and its link")
    func tenLineModule() async throws {
        forecastDays.withLock { $0 = [] }
        let kernel = makeKernel([ModuleFactory(ForecastModule.self)], entitlements: ["weather"])
        try await kernel.boot()
        #expect(try await kernel.contributions(for: .dashboard).first?.content() == Panel(.text("preview")))
        #expect(
            kernel.contributions(for: .dashboard).first?.metadata.title == "forecast", "the title defaults to the id")
        let link = ForecastRoute(day: "monday").link(scheme: "ghost")
        #expect(link.url == "ghost://dashboard/forecast/show?day=monday")
        #expect(await kernel.open(link) == .handled(tab: "dashboard", module: "com.app.forecast"))
        #expect(forecastDays.withLock { $0 } == ["monday: preview"])
        await kernel.shutdown()
    }

    @Test("a route's query is derived from its properties: printed in order, read back, optionals left out")
    func derivedRoute() throws {
        let route = ForecastRoute(day: "a b&c", hours: 3)
        #expect(route.query == [QueryItem("day", "a b&c"), QueryItem("hours", "3")])
        let link = route.link(scheme: "ghost")
        let back = try ForecastRoute(link: link)
        #expect(back.day == "a b&c" && back.hours == 3)
        #expect(ForecastRoute(day: "x").query == [QueryItem("day", "x")])
        let missing = #expect(throws: DeeplinkError.self) {
            try ForecastRoute(link: Deeplink(scheme: "ghost", tab: "dashboard", feature: "forecast", action: "show"))
        }
        #expect(missing?.code == .missingParameter)
        #expect(missing?.message.contains(#"has no "day" parameter"#) == true)
        let bad = #expect(throws: DeeplinkError.self) {
            try ForecastRoute(
                link: Deeplink(
                    scheme: "ghost", tab: "dashboard", feature: "forecast", action: "show",
                    query: [QueryItem("day", "x"), QueryItem("hours", "many")]))
        }
        #expect(bad?.code == .invalidParameter)
    }

    @Test("modules build links in the host's scheme")
    func linksInHostScheme() async throws {
        let seen = Locked<[String]>([])
        let kernel = makeKernel([
            serviceModule(
                "com.app.links",
                onActivate: { context in
                    seen.withLock { $0 = [context.url(for: ForecastRoute(day: "x")), context.url(forTab: "weather")] }
                }
            ) { _ in }
        ])
        try await kernel.boot()
        #expect(seen.withLock { $0 } == ["ghost://dashboard/forecast/show?day=x", "ghost://weather"])
        await kernel.shutdown()
    }
}
