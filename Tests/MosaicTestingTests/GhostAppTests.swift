import Configuration
import GhostApp
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

/// The whole app (and `extra` modules), with Ghost's own host and default grant.
func ghostHarness(_ extra: [any Module.Type] = []) -> TestHarness {
    var harness = TestHarness(modules: AppManifest.groups.flatMap { $0.modules } + extra)
    harness.host = AppManifest.host
    harness.entitlements = AppManifest.defaultEntitlements
    return harness
}

@Suite("Ghost")
struct GhostAppTests {
    @Test("Ghost boots clean, with its tabs and widgets in priority order")
    func boots() async throws {
        try await ghostHarness().run { app in
            await app.expectClean()
            #expect(app.contributions(for: .tabs).map(\.id) == ["dashboard", "weather", "sports", "art", "settings"])
            #expect(
                app.contributions(for: .dashboardWidgets).map(\.module) == [
                    "com.ghost.weather", "com.ghost.sports", "com.ghost.art",
                ])
            let weather = try #require(try await app.contents(of: .dashboardWidgets).first)
            #expect(weather.blocks.prefix(2) == [.heading("Chicago"), .facts([Fact("Now", "12°C, Windy")])])
        }
    }

    @Test(
        "Art and Sports wait on standby after boot, start on a team link or the dashboard, and are released when revoked"
    )
    func onDemand() async throws {
        var harness = ghostHarness()
        harness.startsOnDemandModules = false
        try await harness.run { app in
            await app.expectClean()
            await app.expect("com.ghost.art", .standby)
            await app.expect("com.ghost.sports", .standby)
            await app.expect("com.ghost.dashboard", .active)  // they are optional to it
            #expect(app.contributions(for: .tabs).map(\.id) == ["dashboard", "weather", "sports", "art", "settings"])
            #expect(
                await app.open(TeamRoute(name: "celtics").link(scheme: "ghost"))
                    == .handled(tab: "sports", module: "com.ghost.sports"))
            await app.expect("com.ghost.sports", .active)
            await app.expect("com.ghost.art", .standby)
            let widgets = try await app.contents(of: .dashboardWidgets)
            #expect(widgets.map { $0.blocks.first }.count == 3)
            #expect(widgets.last?.blocks.first != .text("No art today."))
            await app.expect("com.ghost.art", .active)
            #expect((await app.report())["com.ghost.art"]?.cause?.name == "demand")
            try await app.revoke("art")
            await app.expect("com.ghost.art", .blocked)
            await app.expectReleased("com.ghost.art")
            try await app.grant("art")
            await app.expect("com.ghost.art", .standby)
        }
    }

    @Test("revoking sports removes its widget; the others keep their order")
    func revoke() async throws {
        try await ghostHarness().run { app in
            try await app.revoke("sports")
            #expect(app.contributions(for: .dashboardWidgets).map(\.id) == ["weather.today", "art.daily"])
            await app.expect("com.ghost.dashboard", .active)  // sports is optional to it
        }
    }

    @Test("a team link sets the favourite team; Analytics counts what was opened", .timeLimit(.minutes(1)))
    func teamLinkAndAnalytics() async throws {
        try await ghostHarness().run { app in
            #expect(
                await app.open(TeamRoute(name: "celtics").link(scheme: "ghost"))
                    == .handled(tab: "sports", module: "com.ghost.sports"))
            #expect(app.sharedState[.favouriteTeam] == "Celtics")
            let scores = try #require(try await app.contents(of: .dashboardWidgets).dropFirst().first)
            #expect(scores.blocks.first == .heading("Celtics"))
            for await usage in app.sharedState.values(of: .usage) where usage == ["sports": 1] { break }
            let panel = try #require(try await app.contents(of: .settings).first { $0.description.contains("sports") })
            #expect(panel == Panel(.facts([Fact("sports", "1")])))
        }
    }

    @Test("a link naming an unknown city is not handled, and lists the cities there are")
    func unknownCity() async throws {
        try await ghostHarness().run { app in
            guard case .notHandled(let error) = await app.open("ghost://dashboard/weather/city?name=Atlantis") else {
                Issue.record("a link to Atlantis was handled")
                return
            }
            #expect(error.description.contains("There is no city named 'Atlantis'; try one of: Chicago, Lisbon"))
            #expect(app.sharedState[.favouriteCity] == "Chicago")
        }
    }

    @Test(
        "Weather shows temperatures in the configured units, and in new ones once the configuration reloads",
        .timeLimit(.minutes(1)))
    func weatherUnits() async throws {
        let unitsKey = AbsoluteConfigKey(["com", "ghost", "weather", "units"])
        let provider = ChangeableProvider([unitsKey: "imperial"])
        var harness = ghostHarness()
        harness.options.configurationProviders = [provider]
        try await harness.run { app in
            await app.expectClean()
            var weather = try #require(try await app.contents(of: .dashboardWidgets).first)
            #expect(weather.blocks.dropFirst().first == .facts([Fact("Now", "54°F, Windy")]))

            provider.setValue("metric", forKey: unitsKey)
            await app.kernel.reloadConfiguration()
            weather = try #require(try await app.contents(of: .dashboardWidgets).first)
            #expect(weather.blocks.dropFirst().first == .facts([Fact("Now", "12°C, Windy")]))
            #expect(await app.kernel.configuration(of: "com.ghost.weather").map(\.value) == ["metric"])
        }
    }

    @Test("units Weather does not know fail its content with the fix, not the app")
    func unknownUnits() async throws {
        var harness = ghostHarness()
        harness.options.configurationProviders = [
            InMemoryProvider(values: [AbsoluteConfigKey(["com", "ghost", "weather", "units"]): "kelvin"])
        ]
        try await harness.run { app in
            await app.expectClean()
            await #expect(throws: (any Error).self) { try await app.contents(of: .dashboardWidgets) }
            #expect(await app.state(of: "com.ghost.sports") == .active)
        }
    }
}
