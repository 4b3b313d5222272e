import Configuration
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Synchronization
import Testing

@testable import GhostApp

/// How often each test widget's content was built. Only ``RenderCacheTests`` uses these modules, one test at a time.
enum RenderCounts {
    static let counting = Locked(0)
    static let failing = Locked(0)
}

extension StateKey where Value == String {
    /// The note the counting widget shows.
    static var note: StateKey<String> { StateKey("test.render.note", initial: "first") }
    /// A key no widget reads.
    static var unread: StateKey<String> { StateKey("test.render.unread", initial: "") }
}

/// A widget that counts its builds and shows the note.
struct CountingModule: Module {
    static let manifest = Manifest(id: "com.test.counting", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .dashboardWidgets, id: "counting", priority: 1, title: "Counting") {
            (context: ActivationContext) in
            RenderCounts.counting.withLock { $0 += 1 }
            return Panel(.text("note: \(context.state[.note])"))
        }
    }
}

/// A widget whose content always throws, counting its attempts.
struct FailingWidgetModule: Module {
    static let manifest = Manifest(id: "com.test.failing-widget", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .dashboardWidgets, id: "failing", priority: 2, title: "Failing") { () -> Panel in
            RenderCounts.failing.withLock { $0 += 1 }
            throw WidgetDataGone()
        }
    }
}

/// The failing widget's error; its description must stay out of the page.
struct WidgetDataGone: Error, CustomStringConvertible {
    var description: String { "the widget's data is gone (hunter2)" }
}

/// A module installed while the host serves, with a widget of its own.
struct LateModule: Module {
    static let manifest = Manifest(id: "com.test.late", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .dashboardWidgets, id: "late", priority: 3, title: "Late") { Panel(.text("late")) }
    }
}

@Suite("Rendering by version", .serialized)
struct RenderCacheTests {
    @Test(
        "an unchanged dashboard is not rebuilt; a write to a key a widget read, a grant, a revoke and a new module show at the next request; an unrelated write rebuilds nothing"
    )
    func versions() async throws {
        let (app, web) = try await ghostWeb([CountingModule.self])
        let builds: @Sendable () -> Int = { RenderCounts.counting.withLock { $0 } }
        try await Application(router: web.router()).test(.router) { client in
            let first = try await client.get("/dashboard")
            #expect(first.body.contains("note: first"))
            let built = builds()
            #expect(built >= 1)

            #expect(try await client.get("/dashboard").body == first.body)
            #expect(builds() == built)

            try await app.sharedState.set(.unread, to: "elsewhere")
            #expect(try await client.get("/dashboard").body == first.body)
            #expect(builds() == built)

            try await app.sharedState.set(.note, to: "second")
            #expect(try await client.get("/dashboard").body.contains("note: second"))
            #expect(builds() == built + 1)

            try await app.revoke("weather")
            #expect(
                widgetModules(try await client.get("/dashboard").body) == [
                    "com.ghost.sports", "com.ghost.art", "com.test.counting",
                ])
            try await app.grant("weather")
            #expect(widgetModules(try await client.get("/dashboard").body).first == "com.ghost.weather")

            // A module's state change (a new module activating) shows too.
            let before = builds()
            #expect(try await app.kernel.install(LateModule.self) == .active)
            let page = try await client.get("/dashboard").body
            #expect(widgetModules(page).contains("com.test.late"))
            #expect(builds() == before + 1)
        }
    }

    @Test("a link that changes the favourite city changes the weather widget at the next request")
    func cityLink() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router()).test(.router) { client in
            #expect(try await client.get("/dashboard").body.contains("<h3>Chicago</h3>"))
            let token = try await client.token()
            _ = try await client.post(
                "/open", form: "csrf=\(token)&url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DLisbon")
            let page = try await client.get("/dashboard").body
            #expect(page.contains("<h3>Lisbon</h3>") && !page.contains("<h3>Chicago</h3>"))
        }
    }

    @Test("a configuration reload redraws what the module renders: Weather's units change at the next request")
    func configurationReload() async throws {
        let unitsKey = AbsoluteConfigKey(["com", "ghost", "weather", "units"])
        let provider = ChangeableProvider([unitsKey: "imperial"])
        let (app, web) = try await ghostWeb(configuration: [provider])
        try await Application(router: web.router()).test(.router) { client in
            #expect(try await client.get("/dashboard").body.contains("54°F"))
            provider.setValue("metric", forKey: unitsKey)
            await app.kernel.reloadConfiguration()
            let page = try await client.get("/dashboard").body
            #expect(page.contains("12°C") && !page.contains("54°F"))
        }
    }

    @Test("a widget whose content throws fails alone, and is tried again (and logged) at every request")
    func failingWidget() async throws {
        let log = InMemoryLogHandler()
        let (_, web) = try await ghostWeb([FailingWidgetModule.self], logger: Logger(label: "test") { _ in log })
        let attempts: @Sendable () -> Int = { RenderCounts.failing.withLock { $0 } }
        try await Application(router: web.router()).test(.router) { client in
            let first = try await client.get("/dashboard")
            #expect(first.status == 200)
            #expect(first.body.contains("This panel could not be built (error id"))
            #expect(!first.body.contains("hunter2"))
            #expect(widgetModules(first.body).contains("com.ghost.weather"))
            let tried = attempts()
            _ = try await client.get("/dashboard")
            #expect(attempts() == tried + 1)
            #expect(log.entries.filter { $0.metadata["module"] == "com.test.failing-widget" }.count == 2)
        }
    }
}
