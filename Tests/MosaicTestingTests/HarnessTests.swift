import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

@testable import GhostApp

/// Weather data a test controls.
struct StubWeather: WeatherData {
    var reports: [String: Int]
    var cities: [String] { reports.keys.sorted() }
    func weather(in city: String) -> CityWeather? {
        reports[city].map { CityWeather(city: city, temperature: $0, condition: "Stub", forecast: []) }
    }
}

@Suite("TestHarness")
struct HarnessTests {
    @Test("a required module the test does not load is stood in for, and the module starts")
    func standIns() async throws {
        try await TestHarness(WeatherModule.self).run { app in
            #expect(app.standIns == ["com.ghost.location"])
            await app.expect("com.ghost.weather", .active)
            #expect(await app.state(of: "com.ghost.location") == .active)
            await app.expectClean()  // persisted state has a scratch directory of its own
        }
    }

    @Test("a used service nobody provides stops the start, naming the service and the fix")
    func missingService() async throws {
        let error = await #expect(throws: HarnessError.self) { try await TestHarness(DashboardModule.self).start() }
        #expect(error?.code == .invalidModules)
        #expect(error?.diagnostics.map(\.code) == [.missingServiceProvider])
        let text = try #require(error).description
        #expect(
            text.contains("com.ghost.dashboard uses GhostApp.WeatherData, which no module and not the host provides"))
        #expect(text.contains("harness.override(<the service's key>)"))

        var harness = TestHarness(DashboardModule.self)
        harness.override(.weatherData) { StubWeather(reports: ["Chicago": 12]) }
        try await harness.run { app in
            await app.expect("com.ghost.dashboard", .active)
        }
    }

    @Test("a stand-in for a near miss of a loaded module's id is refused as a likely typo, naming both")
    func nearMissStandIn() async throws {
        let consumer = ModuleFactory(
            manifest: Manifest(
                id: "com.test.consumer", version: "1.0.0", requires: [.module("com.ghost.locaton", .from("1.0.0"))])
        ) { LocationModule() }
        let harness = TestHarness(factories: [ModuleFactory(LocationModule.self), consumer])
        let nearMiss = harness.validate().filter { $0.code == .standInNearMiss }
        #expect(nearMiss.map(\.modules) == [["com.test.consumer", "com.ghost.locaton"]])
        #expect(nearMiss.first?.message.contains("did you mean com.ghost.location, which is loaded?") == true)
        let error = await #expect(throws: HarnessError.self) { try await harness.start() }
        #expect(error?.description.contains("testing.stand-in-near-miss") == true)
    }

    @Test("the default host accepts every module; a host set by the test is used as given")
    func host() async throws {
        #expect(TestHarness(LocationModule.self).validate().isEmpty)
        var harness = TestHarness(LocationModule.self)
        harness.host = HostEnvironment(version: "2.3.0")
        #expect(harness.validate().map(\.code) == [.missingHostFeature])
        await #expect(throws: HarnessError.self) { try await harness.start() }
    }

    @Test("declared entitlements are granted unless revoked; grant and revoke at run time move the module")
    func entitlements() async throws {
        var harness = TestHarness(WeatherModule.self)
        harness.revoke("weather")
        try await harness.run { app in
            await app.expect("com.ghost.weather", .blocked(by: .entitlement("weather")))
            #expect(app.contributions(for: .dashboardWidgets).isEmpty)

            try await app.grant("weather")
            await app.expect("com.ghost.weather", .active)
            #expect(app.contributions(for: .dashboardWidgets).map(\.id) == ["weather.today"])

            try await app.revoke("weather")
            #expect(app.contributions(for: .dashboardWidgets).isEmpty)
        }
    }

    @Test("run shuts the app down when its body returns and when it throws")
    func scopedRun() async throws {
        struct Oops: Error {}
        let kept = Locked<TestApp?>(nil)
        await #expect(throws: Oops.self) {
            try await TestHarness(WeatherModule.self).run { app in
                kept.withLock { $0 = app }
                await app.expect("com.ghost.weather", .active)
                throw Oops()
            }
        }
        let app = try #require(kept.withLock { $0 })
        #expect(await app.state(of: "com.ghost.weather") == .deactivated)
        let state = try await TestHarness(WeatherModule.self).run { app in await app.state(of: "com.ghost.weather") }
        #expect(state == .active)
    }

    @Test("an activation made to throw fails the module with the error, and blocks what requires it")
    func activationThrows() async throws {
        var harness = TestHarness(WeatherModule.self, DashboardModule.self)
        harness.failActivation(of: "com.ghost.weather", with: InjectedFault("disk full"))
        try await harness.run { app in
            await app.expect("com.ghost.weather", .failed(reason: "disk full"))
            await app.expect("com.ghost.dashboard", .blocked(by: .module("com.ghost.weather")))
            await app.expectDiagnostic(.activationFailed, about: "com.ghost.weather")
        }
    }

    @Test(
        "an activation made to hang is failed after the time limit; the module that optionally requires it stays active"
    )
    func activationHangs() async throws {
        var harness = TestHarness(ArtModule.self, AfterArtModule.self)
        let clock = ManualClock()
        harness.options.clock = clock
        harness.hangActivation(of: "com.ghost.art")
        // Art starts on demand: started by the test once the app is up, so that its activation limit is the one
        // timer this short (a storage call's deadline is 5 s away). Started by `start()`, right after boot, the
        // wait below could count the other module's activation limit, set for a moment during boot, and advance
        // the clock before Art's was set: under load it hung.
        harness.startsOnDemandModules = false
        let app = try await harness.start()
        let starting = Task { try await app.kernel.start("com.ghost.art") }
        let limit = harness.options.activationTimeLimit
        await clock.sleepers(reaching: 1, dueWithin: limit)
        clock.advance(by: limit)
        _ = try await starting.value
        await app.expect("com.ghost.art", .failed(reason: "did not finish"))
        await app.expect("com.test.after-art", .active)
        await app.shutdown()
    }

    @Test("a service made to throw reaches the code that uses it: the link is not handled, and says why")
    func serviceThrows() async throws {
        var harness = TestHarness(WeatherModule.self)
        harness.failService(.weatherData, with: InjectedFault("weather service down"))
        try await harness.run { app in
            let result = await app.open(CityRoute(name: "Oslo").link(scheme: "ghost"))
            guard case .notHandled(let error) = result else {
                Issue.record("expected the link not to be handled, got \(result)")
                return
            }
            #expect(error.description.contains("weather service down"))
            await #expect(throws: (any Error).self) { try await app.contents(of: .dashboardWidgets) }
        }
    }

    @Test("the harness's own faults carry a code saying where they were injected")
    func faultCodes() async throws {
        var harness = TestHarness(WeatherModule.self, ArtModule.self)
        harness.failService(.weatherData)
        harness.failActivation(of: "com.ghost.art")
        try await harness.run { app in
            let thrown = await #expect(throws: (any Error).self) { try await app.contents(of: .dashboardWidgets) }
            #expect(String(describing: thrown).contains("injected failure of WeatherData"))
            let fault = try #require(Self.fault(in: thrown))
            #expect(fault.code == .service)
            await app.expect("com.ghost.art", .failed(reason: "injected failure"))
        }
        #expect(InjectedFault("disk full").code == .injected)
    }

    /// The injected fault `error` is or wraps, found through its mirror.
    static func fault(in error: (any Error)?) -> InjectedFault? {
        guard let error else { return nil }
        if let fault = error as? InjectedFault { return fault }
        for child in Mirror(reflecting: error).children {
            if let fault = child.value as? InjectedFault { return fault }
            if let inner = child.value as? any Error, let fault = fault(in: inner) { return fault }
        }
        return nil
    }

    @Test("expectations that fail read well: the state, what was expected, and the report")
    func failureMessages() async throws {
        try await TestHarness(ArtModule.self).run { app in
            await withKnownIssue {
                await app.expect("com.ghost.art", .failed)
            } matching: { issue in
                let text = String(describing: issue)
                return text.contains("com.ghost.art is active, expected failed") && text.contains("MODULE")
            }
            await withKnownIssue {
                await app.expect("com.ghost.nothing", .active)
            } matching: {
                String(describing: $0).contains("com.ghost.nothing is not in this test (it has com.ghost.art)")
            }
            await withKnownIssue {
                await app.expectDiagnostic(.activationFailed)
            } matching: {
                String(describing: $0).contains("No activation.failed diagnostic")
            }
        }
    }

    @Test("phases, host events, events and state are driven and observed through the app")
    func drive() async throws {
        var harness = TestHarness(WeatherModule.self, AnalyticsModule.self)
        harness.override(.weatherData) { StubWeather(reports: ["Oslo": -3, "Chicago": 12]) }
        try await harness.run { app in
            let launch = try await app.run(.launch)
            #expect(launch.failures.isEmpty)
            let event = try await app.send(HostEvent(.enteredBackground))
            #expect(event.failures.isEmpty)

            var cities = app.sharedState.values(of: .favouriteCity).makeAsyncIterator()
            #expect(await cities.next() == "Chicago")
            var opened = app.events.subscribe(to: FeatureOpened.self).makeAsyncIterator()

            #expect(
                await app.open("ghost://dashboard/weather/city?name=Oslo")
                    == .handled(tab: "dashboard", module: "com.ghost.weather"))
            #expect(app.navigations == ["dashboard"])
            #expect(await cities.next() == "Oslo")
            let envelope = try #require(await opened.next())
            #expect(envelope.sender == "com.ghost.weather")
            #expect(envelope.event == FeatureOpened(feature: "weather"))

            try await app.sharedState.set(.favouriteCity, to: "Chicago")
            let widget = try #require(try await app.contents(of: .dashboardWidgets).first)
            #expect(widget.blocks.first == .heading("Chicago"))
        }
    }

    @Test("harnesses in parallel keep their own overrides, state and events", arguments: [50])
    func parallel(count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    let city = "City \(index)"
                    var harness = TestHarness(WeatherModule.self)
                    // Time stands still: 50 harnesses at once on a loaded machine (the thread sanitizer's run) took
                    // Weather's activation past the default 2 s limit of the real clock.
                    harness.options.clock = ManualClock()
                    harness.override(.weatherData) { StubWeather(reports: [city: index]) }
                    let app = try await harness.start()
                    let result = await app.open(CityRoute(name: city).link(scheme: "ghost"))
                    #expect(result == .handled(tab: "dashboard", module: "com.ghost.weather"))
                    #expect(app.sharedState[.favouriteCity] == city)
                    let widget = try #require(try await app.contents(of: .dashboardWidgets).first)
                    #expect(widget.blocks.first == .heading(city))
                    await app.shutdown()
                }
            }
            try await group.waitForAll()
        }
    }
}

/// A module that starts after Art, whatever becomes of it: Art is its optional dependency.
struct AfterArtModule: Module {
    static let manifest = Manifest(
        id: "com.test.after-art", version: "1.0.0", requires: [.module("com.ghost.art", optional: true)])

    static func register(in module: inout ModuleRegistrar) {}
}
