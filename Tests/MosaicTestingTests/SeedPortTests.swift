import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

@testable import GhostApp

/// The testing examples of the seeds, written against Mosaic. Each names the original it ports.
@Suite("Seed ports")
struct SeedPortTests {
    // Ghost (seed 003), "Testing Deeplink Handlers": WeatherDeeplinkHandlerTests, 2 tests in 35 lines.
    @Test("a city link is handled and saves the city")
    func cityLinkSavesCity() async throws {
        try await TestHarness(WeatherModule.self).run { app in
            #expect(
                await app.open("ghost://dashboard/weather/city?name=Oslo")
                    == .handled(tab: "dashboard", module: "com.ghost.weather"))
            #expect(app.sharedState[.favouriteCity] == "Oslo")
        }
    }

    @Test("a link to an unknown action is not handled")
    func unknownActionIsNotHandled() async throws {
        try await TestHarness(WeatherModule.self).run { app in
            guard case .notHandled(let error) = await app.open("ghost://dashboard/weather/unknown") else {
                Issue.record("ghost://dashboard/weather/unknown was handled")
                return
            }
            #expect(error.code == .noHandler)
        }
    }

    // Ghost, "Testing UIProviders": WeatherUIProviderTests with a hand-written MockUIRegistry, 30 lines.
    @Test("Weather contributes its widget to the dashboard")
    func weatherWidget() async throws {
        try await TestHarness(WeatherModule.self).run { app in
            #expect(app.contributions(for: .dashboardWidgets).map(\.id) == ["weather.today"])
        }
    }

    // Ghost, "Test Harness for Full Module Testing": load one module, override its network, resolve, run a
    // phase, handle a link; 30 lines.
    @Test("Weather alone, with its data stubbed")
    func harnessExample() async throws {
        var harness = TestHarness(WeatherModule.self)
        harness.override(.weatherData) { StubWeather(reports: ["NYC": 10]) }
        try await harness.run { app in
            #expect(try await app.resolve(.weatherData).cities == ["NYC"])
            try await app.run(.launch)
            #expect(
                await app.open("ghost://dashboard/weather/city?name=NYC")
                    == .handled(tab: "dashboard", module: "com.ghost.weather"))
        }
    }

    // Ghost, "Integration Testing with Test Container": real services together, only the network mocked; 40
    // lines. Here the real modules run: Weather saves the city, Dashboard greets with it.
    @Test("Weather and Dashboard share the favourite city")
    func integration() async throws {
        var harness = TestHarness(LocationModule.self, WeatherModule.self, DashboardModule.self)
        harness.override(.weatherData) { StubWeather(reports: ["Chicago": 12, "Lisbon": 21]) }
        try await harness.run { app in
            _ = await app.open(CityRoute(name: "Lisbon").link(scheme: "ghost"))
            let greeting = try #require(try await app.contents(of: .dashboard).first)
            #expect(greeting.description.contains("Showing Lisbon"))
        }
    }

    // Forge (seed 004), withOverrides: a view model's dependency replaced for one test, restored after.
    @Test("withOverrides replaces a service for the code inside it only")
    func forgeWithOverrides() async throws {
        var harness = TestHarness(WeatherModule.self)
        harness.load(ProbeModule.self)
        try await harness.run { app in
            let services = try #require(await app.kernel.services(for: ProbeModule.manifest.id))
            let model = await services.inject { CityModel() }
            let stubbed = try await withOverrides {
                $0.override(.weatherData) { StubWeather(reports: ["Stub": 1]) }
            } operation: {
                try model.cities()
            }
            #expect(stubbed == ["Stub"])
            #expect(try model.cities().contains("Chicago"))
        }
    }

    // Forge, unimplemented: a dependency the app must wire fails loudly, naming it, until a test provides it.
    @Test("an unimplemented placeholder names the service until the test overrides it")
    func forgeUnimplemented() async throws {
        try await TestHarness(PlaceholderModule.self).run { app in
            let error = await #expect(throws: ServiceError.self) { try await app.resolve(.analytics) }
            #expect(error?.description.contains("analytics is not wired") == true)
        }
        var harness = TestHarness(PlaceholderModule.self)
        harness.override(.analytics) { CountingAnalytics() }
        let overridden = try await harness.run { app in try await app.resolve(.analytics) }
        #expect(overridden is CountingAnalytics)
    }

    // Spezi (seed 002), @Provide / @Collect: one module provides a greeting, another collects every greeting.
    @Test("a module collects what others contribute")
    func speziProvideCollect() async throws {
        var harness = TestHarness(GreetingModule.self, CollectorModule.self)
        harness.extensionPoints = [ExtensionPoint<String>.greetings.erased]
        try await harness.run { app in
            try await app.run(.launch)
            #expect(app.sharedState[.collectedGreetings] == ["Hello World"])
        }
    }
}

// MARK: The modules and stand-ins of the ports

/// A module that only uses Weather's data, to host a view model.
struct ProbeModule: Module {
    static let manifest = Manifest(id: "com.test.probe", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) { module.services.use(.weatherData) }
}

/// A view model that resolves its data where it is created.
struct CityModel: Sendable {
    @Injected(.weatherData) var weather
    func cities() throws -> [String] { try weather().cities }
}

protocol Analytics: Sendable {}

extension ServiceKey where Value == any Analytics {
    static var analytics: Self { Self() }
}
struct CountingAnalytics: Analytics {}

/// Forge's cross-module proxy: the app wires analytics; the module's own registration is a placeholder.
struct PlaceholderModule: Module {
    static let manifest = Manifest(id: "com.test.search", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.services.singleton(.analytics, rank: .fallback) { try unimplemented("analytics") }
    }
}

extension ExtensionPoint where Content == String {
    static var greetings: Self { ExtensionPoint(id: "com.test.greetings") }
}

extension StateKey where Value == [String] {
    static var collectedGreetings: Self { StateKey("com.test.collected-greetings", initial: []) }
}

struct GreetingModule: Module {
    static let manifest = Manifest(id: "com.test.greeting", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .greetings, id: "hello", title: "Hello") { "Hello World" }
    }
}

struct CollectorModule: Module {
    static let manifest = Manifest(id: "com.test.collector", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.writes(.collectedGreetings)
        module.participate(in: .launch) { context in
            try await context.state.set(.collectedGreetings, to: try await context.contributions.values(of: .greetings))
        }
    }
}
