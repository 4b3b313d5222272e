import Configuration
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Testing

@testable import GhostApp

/// A module that tries to inject markup and scripts through everything it contributes.
struct HostileModule: Module {
    static let manifest = Manifest(id: "com.test.hostile", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .dashboardWidgets, id: "hostile", priority: 1, title: "<script>alert(1)</script>") {
            Panel(
                .text("<img src=x onerror=alert(2)>"), .link(title: "click", target: "javascript:alert(3)"),
                .link(title: "far", target: "//evil.example/x"), .link(title: "back", target: "/\\evil.example/y"),
                .link(title: "tab", target: "/\t/evil.example/t"), .link(title: "space", target: " //evil.example/s"),
                .image(source: "ghost:////evil.example/z", alternative: "z"),
                // A quote with a combining mark is one Character: escaping by Character let it out of the attribute.
                .image(source: "/art.png", alternative: "a\"\u{301} onerror=alert(4) x=\"\u{301}"))
        }
    }
}

/// A module whose dashboard widget cannot be built.
struct BrokenWidgetModule: Module {
    struct Broken: Error {}
    static let manifest = Manifest(id: "com.test.broken-widget", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .dashboardWidgets, id: "broken", title: "Broken") { () throws -> Panel in throw Broken() }
    }
}

/// A durable note as it was once published, and the shape its handler reads now: the old data cannot be read.
struct NoteV1: DurableEvent {
    static let durableName = "com.test.note"
    let id: Int
}

struct NoteV2: DurableEvent {
    static let durableName = "com.test.note"
    let text: String
}

/// A module with a durable handler of notes.
struct NoteModule: Module {
    static let manifest = Manifest(id: "com.test.notes", version: "1.0.0")
    func activate(_ context: ActivationContext) async throws {
        try await context.events.handle(NoteV2.self, as: "file") { _ in }
    }
}

extension WebHostOptions {
    /// The defaults, with the development opt-in that lets a local request change the app without a key: for
    /// tests about something else than the key (OperatorKeyTests are about the key).
    static var local: WebHostOptions {
        var options = WebHostOptions()
        options.unsafeChangesWithoutKeyOnLoopback = true
        return options
    }
}

/// Ghost served in process, its modules run by a test harness.
func ghostWeb(
    _ extra: [any Module.Type] = [], options: WebHostOptions = .local,
    logger: Logger = Logger(label: "test.web") { _ in SwiftLogNoOpLogHandler() },
    configuration: [any ConfigProvider] = [], startsOnDemandModules: Bool = true,
    operations: OperationsOptions = .init()
) async throws -> (TestApp, WebHost) {
    var harness = ghostHarness(extra)
    harness.startsOnDemandModules = startsOnDemandModules
    harness.options.configurationProviders = configuration
    harness.extensionPoints = WebHost.extensionPoints
    harness.options.deeplinkRules = DeeplinkRules(allowedSchemes: ["ghost"])
    let app = try await harness.start()
    var catalog = ModuleCatalog(groups: AppManifest.groups)
    for module in extra { catalog.add(module) }
    return (
        app,
        WebHost(
            kernel: app.kernel, catalog: catalog, scheme: "ghost", title: "Ghost", options: options, logger: logger,
            operations: operations)
    )
}

extension TestClientProtocol {
    /// GETs `uri` and returns the status and body.
    func get(_ uri: String) async throws -> (status: Int, body: String, headers: HTTPFields) {
        try await execute(uri: uri, method: .get) { ($0.status.code, String(buffer: $0.body), $0.headers) }
    }

    func post(
        _ uri: String, form: String, headers: HTTPFields = [:]
    ) async throws -> (status: Int, body: String, headers: HTTPFields) {
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: form)) {
            ($0.status.code, String(buffer: $0.body), $0.headers)
        }
    }

    /// Sends `method` to `uri` and returns the status and body.
    func send(
        _ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = [:], body: String = ""
    ) async throws -> (status: Int, body: String, headers: HTTPFields) {
        try await execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: body)) {
            ($0.status.code, String(buffer: $0.body), $0.headers)
        }
    }

    /// The page's CSRF token, read from Settings.
    func token() async throws -> String {
        let settings = try await get("/settings").body
        return try #require(
            settings.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first.map {
                String($0.prefix { $0 != "\"" })
            })
    }
}

/// The ids of the `data-module` attributes of widgets, in page order.
func widgetModules(_ html: String) -> [String] {
    html.components(separatedBy: "<section class=\"widget\" data-module=\"").dropFirst().map {
        String($0.prefix { $0 != "\"" })
    }
}

@Suite("Web host")
struct WebHostTests {
    @Test("the host's logs behind a module's middleware do not name that module: only its own code runs as it")
    func middlewareDoesNotClaimTheHost() async throws {
        var handler = InMemoryLogHandler()
        handler.metadataProvider = .mosaicModule
        let (app, web) = try await ghostWeb(
            [BrokenWidgetModule.self], logger: Logger(label: "test.web") { [handler] _ in handler })
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/dashboard")
            #expect(page.status == 200)
            #expect(page.headers[HTTPField.Name("X-Ghost-Analytics")!] == "on")  // Analytics' middleware ran
        }
        let fault = try #require(handler.entries.first { "\($0.message)" == "A panel's factory threw" })
        #expect(fault.metadata["module"] == "com.test.broken-widget")
        // The request passed through Analytics' middleware, but the web host wrote this line, not Analytics.
        #expect(fault.metadata["mosaic.module"] == nil)
        await app.shutdown()
    }

    @Test("the dashboard shows three modules' widgets in priority order, inside the shell")
    func dashboard() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/dashboard")
            #expect(page.status == 200)
            #expect(widgetModules(page.body) == ["com.ghost.weather", "com.ghost.sports", "com.ghost.art"])
            #expect(page.body.contains("<a data-item=\"dashboard\" href=\"/dashboard\" aria-current=\"page\">"))
            #expect(page.body.contains("data-item=\"analytics\""))  // the sidebar
            #expect(page.headers[HTTPField.Name("X-Ghost-Analytics")!] == "on")  // module middleware
            #expect(try await client.get("/").status == 302)
        }
    }

    @Test(
        "every tab has a page; an unknown tab is a 404 that names the tabs",
        arguments: ["weather", "sports", "art", "settings"])
    func tabs(tab: String) async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/\(tab)")
            #expect(page.status == 200)
            #expect(page.body.contains("aria-current=\"page\""))
            let missing = try await client.get("/nowhere")
            #expect(missing.status == 404)
            #expect(missing.body.contains("The tabs are: dashboard, weather, sports, art, settings."))
        }
    }

    @Test("deeplinks in both forms go through the router and land on their tab once confirmed with a POST")
    func deeplinks() async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let token = try await client.token()
            let opened = try await client.post(
                "/open", form: "csrf=\(token)&url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DLisbon")
            #expect(opened.status == 200)
            #expect(
                opened.body.contains("Opened ghost://dashboard/weather/city?name=Lisbon, handled by com.ghost.weather.")
            )
            #expect(app.sharedState[.favouriteCity] == "Lisbon")

            let asked = try await client.get("/sports/sports/team?name=Knicks")
            #expect(asked.status == 200)
            #expect(asked.body.contains("<form method=\"post\" action=\"/open\">"))
            let url = try #require(
                asked.body.components(separatedBy: "name=\"url\" value=\"").dropFirst().first?.prefix { $0 != "\"" })
            #expect(url == "ghost://sports/sports/team?name=Knicks")
            let path = try await client.post(
                "/open", form: "csrf=\(token)&url=\(url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(path.body.contains("<a data-item=\"sports\" href=\"/sports\" aria-current=\"page\">"))
            #expect(app.sharedState[.favouriteTeam] == "Knicks")
        }
    }

    @Test(
        "a bad link or parameter gets a 400 page that says what was wrong",
        arguments: [
            ("/open", "Add the link to open"),
            ("/open?url=https://evil.example/x", "scheme"),
            ("ghost://dashboard/weather/city", "has no &quot;name&quot; parameter"),
            ("ghost://dashboard/weather/city?name=Atlantis", "There is no city named &#39;Atlantis&#39;"),
            ("/dashboard/weather/city?name=%ZZ", "%"),
        ])
    func badLinks(uri: String, message: String) async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            // Links that pass the GET's checks fail in their handler, after the confirmation's POST.
            let page =
                uri.hasPrefix("/")
                ? try await client.get(uri)
                : try await client.post(
                    "/open",
                    form:
                        "csrf=\(try await client.token())&url=\(uri.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                )
            #expect(page.status == 400, "\(uri): \(page.body)")
            #expect(page.body.contains(message), "\(uri): \(page.body)")
            #expect(app.sharedState[.favouriteCity] == "Chicago")
        }
    }

    @Test(
        "Art and Sports wait on standby, /modules says what starts them, and the dashboard's first render starts both")
    func onDemandModules() async throws {
        let (app, web) = try await ghostWeb(startsOnDemandModules: false)
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let modules = try await client.get("/modules")
            #expect(modules.body.components(separatedBy: "data-state=\"standby\"").count - 1 == 2)
            #expect(modules.body.contains("starts on: a link to sports/team"))
            let settings = try await client.get("/settings")
            #expect(settings.body.contains("data-item=\"sports\""), "their tabs show without starting them")
            #expect(await app.state(of: "com.ghost.sports") == .standby)
            let dashboard = try await client.get("/dashboard")
            #expect(dashboard.status == 200)
            #expect(
                dashboard.body.contains("data-id=\"sports.scores\"") && dashboard.body.contains("data-id=\"art.daily\"")
            )
            #expect(!dashboard.body.contains("could not be built"))
            await app.expect("com.ghost.sports", .active)
            await app.expect("com.ghost.art", .active)
        }
    }

    @Test("Modules lists the boot report; the graph is SVG with a node per module and an edge per dependency")
    func systemPages() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let modules = try await client.get("/modules")
            #expect(modules.status == 200)
            #expect(modules.body.components(separatedBy: "data-state=\"active\"").count - 1 == 7)
            let graph = try await client.get("/graph.svg")
            #expect(graph.headers[.contentType] == "image/svg+xml")
            #expect(graph.body.components(separatedBy: "<g class=\"node\"").count - 1 == 7)
            #expect(graph.body.contains("data-from=\"com.ghost.weather\" data-to=\"com.ghost.location\""))
            #expect(try await client.get("/graph").body.contains("<svg"))
        }
    }

    @Test("each module's canvas is served at /modules/ID and linked from Modules; an unknown one is a 404")
    func canvasPages() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            #expect(try await client.get("/modules").body.contains("href=\"/modules/com.ghost.weather\""))
            let canvas = try await client.get("/modules/com.ghost.weather")
            #expect(canvas.status == 200)
            #expect(canvas.body.contains("<article class=\"canvas\" data-module=\"com.ghost.weather\">"))
            #expect(canvas.body.contains("data-section=\"Events published\""))
            let unknown = try await client.get("/modules/com.ghost.nope")
            #expect(unknown.status == 404)
            #expect(unknown.body.contains("com.ghost.weather"))
        }
    }

    @Test("Settings revokes and grants with the page's token; without it nothing changes")
    func settings() async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let token = try await client.token()

            let forged = try await client.post("/settings/entitlements", form: "entitlement=weather&action=revoke")
            #expect(forged.status == 403)
            #expect(await app.state(of: "com.ghost.weather") == .active)

            let revoked = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke")
            #expect(revoked.status == 303)
            await app.expect("com.ghost.weather", .blocked(by: .entitlement("weather")))
            #expect(widgetModules(try await client.get("/dashboard").body) == ["com.ghost.sports", "com.ghost.art"])

            _ = try await client.post("/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=grant")
            #expect(widgetModules(try await client.get("/dashboard").body).first == "com.ghost.weather")

            let garbled = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=%ZZ&action=revoke")
            #expect(garbled.status == 400)
            #expect(garbled.body.contains("This form could not be read"))
            await app.expect("com.ghost.weather", .active)

            let unknown = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=root&action=grant")
            #expect(unknown.status == 400)
            #expect(unknown.body.contains("Name one of the app&#39;s entitlements: art, sports, weather."))
        }
    }

    @Test("the admin port lists undelivered durable events; resubmitting one takes the page's token")
    func undeliveredEvents() async throws {
        let (app, web) = try await ghostWeb([NoteModule.self])
        try await app.kernel.events.publish(NoteV1(id: 1))
        while try await app.kernel.undeliveredEvents().isEmpty { await Task.yield() }
        let page = try await Application(router: web.adminRouter()).test(.router) { try await $0.get("/").body }
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let delivery = try #require(try await app.kernel.undeliveredEvents().first).id
            #expect(page.contains("<h2>Undelivered events</h2>"))
            #expect(
                page.contains(
                    "<tr data-delivery=\"\(delivery)\"><td>com.test.note</td><td>com.test.notes/file</td><td>parked</td>"
                ))
            let forged = try await client.post("/modules/undelivered", form: "delivery=\(delivery)")
            #expect(forged.status == 403)
            let token = try await client.token()
            let resubmitted = try await client.post("/modules/undelivered", form: "csrf=\(token)&delivery=\(delivery)")
            #expect(resubmitted.status == 303)
            let unknown = try await client.post("/modules/undelivered", form: "csrf=\(token)&delivery=999")
            #expect(unknown.status == 404 && unknown.body.contains("Delivery 999 is not waiting"))
            let garbled = try await client.post("/modules/undelivered", form: "csrf=\(token)&delivery=x")
            #expect(garbled.status == 400)
        }
    }

    @Test("every string a module provides is escaped; links to other schemes are dropped")
    func escaping() async throws {
        let (_, web) = try await ghostWeb([HostileModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/dashboard").body
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(page.contains("&lt;img src=x onerror=alert(2)&gt;"))
            #expect(!page.contains("<script>") && !page.contains("javascript:"))
            #expect(!page.contains("evil.example"))  // scheme-relative targets, however spelled
            #expect(page.contains("a&quot;\u{301} onerror=alert(4) x=&quot;\u{301}"))
            #expect(!page.contains("alt=\"a\"\u{301}"))
        }
    }

    @Test("modules serve their own routes under /api while active")
    func moduleRoutes() async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let oslo = try await client.get("/api/weather/Oslo")
            #expect(oslo.status == 200)
            #expect(oslo.body.contains("\"temperature\":-3"))
            #expect(try await client.get("/api/weather/Atlantis").status == 404)
            try await app.revoke("weather")
            let gone = try await client.get("/api/weather/Oslo")
            #expect(gone.status == 404)
            #expect(gone.body.contains("No active module serves GET /api/weather/Oslo."))
        }
    }
}
