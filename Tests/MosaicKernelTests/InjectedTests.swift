import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

/// What `ForecastReader` saw, per test run.
let forecastsSeen = Locked<[String: String]>([:])

/// A module that injects a service into a stored property and reads it when activated and deactivated.
struct ForecastReader: Module {
    static let manifest = Manifest(id: "com.app.reader", version: "1.0.0")

    @Injected(.forecast) var forecast

    func activate(_ context: ActivationContext) async throws {
        let text = try forecast().text
        forecastsSeen.withLock { $0["activate"] = text }
    }

    func deactivate() async {
        let text = (try? forecast().text) ?? "unresolved"
        forecastsSeen.withLock { $0["deactivate"] = text }
    }
}

@Suite(.serialized) struct InjectedTests {
    @Test("@Injected in a module resolves from that module's services, in activate and deactivate")
    func injectedInModule() async throws {
        forecastsSeen.withLock { $0 = [:] }
        let kernel = makeKernel([
            ModuleFactory(ForecastReader.self),
            serviceModule("com.app.weather") { $0.services.singleton(.forecast) { PreviewForecast() } },
        ])
        let report = try await kernel.boot()
        #expect(report.count("active") == 2)
        await kernel.shutdown()
        #expect(forecastsSeen.withLock { $0 } == ["activate": "preview", "deactivate": "preview"])
    }

    @Test("a module's @Injected property declares its use: validation sees it, with no services.use")
    func injectedDeclaresItsUse() {
        let diagnostics = Kernel.validate(catalog(ModuleFactory(ForecastReader.self)), host: testHost)
        #expect(diagnostics.map(\.code) == [.missingServiceProvider])
        #expect(diagnostics.first?.message.contains("com.app.reader uses MosaicKernelTests.Forecast") == true)
    }

    @Test("@Injected created outside module code resolves from the module whose code reads it")
    func injectedOutsideReadInside() async throws {
        struct Screen { @Injected(.forecast) var forecast }
        let screen = Screen()
        let seen = Locked<String?>(nil)
        let kernel = makeKernel([
            serviceModule("com.app.weather") { $0.services.singleton(.forecast) { PreviewForecast() } },
            serviceModule(
                "com.app.screen", requires: [.module("com.app.weather")],
                onActivate: { _ in
                    let text = try screen.forecast().text
                    seen.withLock { $0 = text }
                }
            ) { $0.services.use(.forecast) },
        ])
        let report = try await kernel.boot()
        #expect(report.count("active") == 2)
        #expect(seen.withLock { $0 } == "preview")
        await kernel.shutdown()
    }

    @Test("@Injected created outside module code says so, and a test override still reaches it")
    func injectedOutsideModule() async throws {
        struct Screen { @Injected(.forecast) var forecast }
        let screen = Screen()
        let error = #expect(throws: ServiceError.self) { try screen.forecast() }
        #expect(error?.code == .outsideModule)
        #expect(error?.message.contains("withOverrides") == true)
        let text = try await withOverrides {
            $0.override(.forecast) { ClockForecast(clock: FixedClock(now: 9)) }
        } operation: {
            try screen.forecast().text
        }
        #expect(text == "sunny at 9")
    }

    @Test("@Injected respects least privilege: an undeclared service fails with the registration to add")
    func injectedUndeclared() async throws {
        let outcome = Locked<ServiceError?>(nil)
        struct Nosy { @Injected(.clock) var clock }
        let kernel = makeKernel([
            serviceModule("com.app.time") { $0.services.singleton(.clock) { FixedClock() } },
            serviceModule(
                "com.app.nosy", requires: [.module("com.app.time")],
                onActivate: { _ in
                    do { _ = try Nosy().clock() } catch { outcome.withLock { $0 = error as? ServiceError } }
                }
            ) { _ in },
        ])
        try await kernel.boot()
        #expect(outcome.withLock { $0 }?.code == .notDeclared)
        await kernel.shutdown()
    }

    @Test("withService lends the singleton resolve returns, and sees overrides and missing declarations")
    func borrowed() async throws {
        let kernel = makeKernel([
            serviceModule("com.app.weather") { $0.services.singleton(.forecast) { PreviewForecast() } },
            serviceModule("com.app.time") { $0.services.singleton(.clock) { FixedClock(now: 3) } },
        ])
        try await kernel.boot()
        let services = await kernel.services(for: "com.app.weather")
        #expect(try services?.withService(.forecast) { $0.text } == "preview")
        let error = #expect(throws: ServiceError.self) { try services?.withService(.clock) { $0.now } }
        #expect(error?.code == .notDeclared)
        let overridden = try await withOverrides {
            $0.override(.forecast) { ClockForecast(clock: FixedClock()) }
        } operation: {
            try services?.withService(.forecast) { $0.text }
        }
        #expect(overridden == "sunny at 42")
        await kernel.shutdown()
    }
}
