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

/// A fresh marker for one test's requests.
func marker() -> String { UUID().uuidString.lowercased() }

@Suite("Web host defences")
struct WebDefenceTests {
    @Test("a cross-site form POST to a module's route is refused with 403, and its handler never runs")
    func crossSitePost() async throws {
        let (_, web) = try await ghostWeb([NotesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let foreign = marker()
            let forged = try await client.post(
                "/api/notes", form: "note=\(foreign)", headers: [.origin: "https://attacker.example"])
            #expect(forged.status == 403)
            #expect(forged.body.contains("did not carry the page&#39;s token") || forged.body.contains("page's token"))
            let bare = marker()
            #expect(try await client.post("/api/notes", form: "note=\(bare)").status == 403)
            let crossSite = marker()
            let fetched = try await client.post(
                "/api/notes", form: "note=\(crossSite)&csrf=\(try await client.token())",
                headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            #expect(fetched.status == 403)
            let sandboxed = marker()
            #expect(
                try await client.post("/api/notes", form: "note=\(sandboxed)", headers: [.origin: "null"]).status == 403
            )
            let deleted = marker()
            #expect(try await client.send(.delete, "/api/notes/\(deleted)").status == 403)
            for refused in [foreign, bare, crossSite, sandboxed, deleted] { #expect(!Reached.contains(refused)) }
        }
    }

    @Test("a module's route answers a POST with the page's token, or one provably from the host's pages")
    func sameSitePost() async throws {
        let (_, web) = try await ghostWeb([NotesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let token = try await client.token()
            let form = marker()
            #expect(try await client.post("/api/notes", form: "csrf=\(token)&note=\(form)").status == 201)
            let header = marker()
            let scripted = try await client.post(
                "/api/notes", form: "note=\(header)", headers: [HTTPField.Name("X-CSRF-Token")!: token])
            #expect(scripted.status == 201)
            let origin = marker()
            let sameOrigin = try await client.post(
                "/api/notes", form: "note=\(origin)", headers: [.origin: "http://localhost"])
            #expect(sameOrigin.status == 201)
            let fetch = marker()
            let sameFetch = try await client.post(
                "/api/notes", form: "note=\(fetch)", headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
            #expect(sameFetch.status == 201)
            let deleted = marker()
            let delete = try await client.send(
                .delete, "/api/notes/\(deleted)", headers: [HTTPField.Name("X-CSRF-Token")!: token])
            #expect(delete.status == 204)
            for answered in [form, header, origin, fetch, deleted] { #expect(Reached.contains(answered)) }
        }
    }

    @Test("a route exempt from the CSRF check accepts a non-browser POST, and the Modules page lists it")
    func exemptRoute() async throws {
        let (_, web) = try await ghostWeb([NotesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let hook = marker()
            let answer = try await client.post("/api/hooks/notes", form: "note=\(hook)")
            #expect(answer.status == 200)
            #expect(Reached.contains(hook))
            let modules = try await client.get("/modules").body
            #expect(modules.contains("data-exempt-route=\"POST /api/hooks/notes\""))
            #expect(!modules.contains("data-exempt-route=\"POST /api/notes\""))
        }
    }

    @Test("a route's handler runs as a call of its module: @Injected there resolves from its module")
    func routeHandlerInjects() async throws {
        let (_, web) = try await ghostWeb([ForecastRouteModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let answer = try await client.get("/api/forecast/Oslo")
            #expect(answer.status == 200)
            #expect(answer.body.contains("-3"))
        }
    }

    @Test(
        "a module's response with a status HTTP does not have, or thousands of header fields, is answered, not a trap")
    func impossibleResponses() async throws {
        let (_, web) = try await ghostWeb([ImpossibleResponsesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            for status in [1000, -1, 100] {
                let answer = try await client.get("/api/impossible-status/\(status)")
                #expect(answer.status == 500)
                #expect(answer.body.contains("not a final HTTP status"), "\(answer.body)")
            }
            let crowded = try await client.get("/api/impossible-headers")
            #expect(crowded.status == 200, "\(crowded.body.prefix(300))")
            #expect(crowded.headers.count < 300, "at most 200 of the module's fields are sent")
        }
    }

    @Test("a state-changing request to the host without proof is refused, whatever its method")
    func hostMethods() async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
                let answer = try await client.send(
                    method, "/settings/entitlements", body: "entitlement=weather&action=revoke")
                #expect(answer.status == 403, "\(method)")
            }
            let foreign = try await client.post(
                "/settings/entitlements", form: "csrf=\(try await client.token())&entitlement=weather&action=revoke",
                headers: [.origin: "https://attacker.example"])
            #expect(foreign.status == 403)
            #expect(await app.state(of: "com.ghost.weather") == .active)
        }
    }

    @Test(
        "a middleware whose services cannot be built answers 500 with an error id, logged with its module; the route never runs"
    )
    func throwingMiddleware() async throws {
        let log = InMemoryLogHandler()
        let (_, web) = try await ghostWeb([BrokenMiddlewareModule.self], logger: Logger(label: "test") { _ in log })
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let guarded = marker()
            let answer = try await client.get("/api/guarded/\(guarded)")
            #expect(answer.status == 500)
            #expect(!Reached.contains(guarded))
            #expect(!answer.body.contains("hunter2") && !answer.body.contains("secret"))
            let entry = try #require(log.entries.first)
            #expect(entry.metadata["module"] == "com.test.broken-middleware")
            #expect(entry.metadata["error"]?.description.contains("hunter2") == true)
            let id = try #require(entry.metadata["error.id"]?.description)
            #expect(answer.body.contains("error id \(id)"))
            #expect(try await client.get("/dashboard").status == 500)
        }
    }

    @Test(
        "a navigation item whose factory throws, or a route whose services cannot be built, answers 500 for itself only, logged with its module"
    )
    func throwingFactories() async throws {
        let log = InMemoryLogHandler()
        let (_, web) = try await ghostWeb(
            [BrokenNavigationModule.self, BrokenRouteModule.self], logger: Logger(label: "test") { _ in log })
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/dashboard")
            #expect(page.status == 500)
            #expect(!page.body.contains("hunter2"))
            #expect(log.entries.contains { $0.metadata["module"] == "com.test.broken-navigation" })
            let api = try await client.get("/api/broken")
            #expect(api.status == 500)
            #expect(api.body.contains("error id") && !api.body.contains("hunter2"))
            #expect(log.entries.contains { $0.metadata["module"] == "com.test.broken-route" })
            // Other routes are matched on what they declared, without building the broken one: before, every
            // /api request answered 500 while a route's factory before the match threw.
            #expect(try await client.get("/api/weather/Oslo").status == 200)
            #expect(try await client.get("/api/nowhere").status == 404)
        }
    }

    @Test(
        "a route's or link handler's fault is a 500 with an error id, the details only in the log; client mistakes stay 4xx"
    )
    func serverFault() async throws {
        let log = InMemoryLogHandler()
        let (_, web) = try await ghostWeb([NotesModule.self], logger: Logger(label: "test") { _ in log })
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let answer = try await client.get("/api/fail")
            #expect(answer.status == 500)
            #expect(!answer.body.contains("hunter2"))
            let id = try #require(log.entries.first?.metadata["error.id"]?.description)
            #expect(answer.body.contains(id))
            #expect(log.entries.first?.metadata["module"] == "com.test.notes")
            let crashed = try await client.post(
                "/open", form: "csrf=\(try await client.token())&url=ghost%3A%2F%2Fdashboard%2Fcrash")
            #expect(crashed.status == 500)
            #expect(!crashed.body.contains("hunter2"))
            let linkID = try #require(log.entries.last?.metadata["error.id"]?.description)
            #expect(crashed.body.contains("error id \(linkID)"))
            #expect(log.entries.last?.metadata["error"]?.description.contains("com.test.notes") == true)
            // A client's mistake stays a 4xx with its message.
            let missing = try await client.get("/api/weather/Atlantis")
            #expect(missing.status == 404)
            #expect(missing.body.contains("no such city"))
            let atlantis = try await client.post(
                "/open",
                form: "csrf=\(try await client.token())&url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DAtlantis")
            #expect(atlantis.status == 400)
            #expect(atlantis.body.contains("There is no city named &#39;Atlantis&#39;"))
        }
    }

    @Test("a write the storage did not take in time is a 503 with Retry-After, for a link and a route alike")
    func storageOutage() async throws {
        let (_, web) = try await ghostWeb([StalledStorageModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let token = try await client.token()
            let link = try await client.post("/open", form: "csrf=\(token)&url=ghost%3A%2F%2Fdashboard%2Fstalled")
            #expect(link.status == 503)
            #expect(link.headers[.retryAfter] == "5")
            #expect(link.body.contains("Try again"))
            let route = try await client.post("/api/stalled", form: "", headers: [.init("X-CSRF-Token")!: token])
            #expect(route.status == 503)
            #expect(route.headers[.retryAfter] == "5")
        }
    }

    @Test("every host's token is 64 hex digits: 32 random bytes, each as two digits")
    func tokens() async throws {
        let (app, web) = try await ghostWeb()
        var tokens: Set<String> = []
        for _ in 0..<64 {
            let token = WebHost(kernel: app.kernel, catalog: web.catalog, scheme: "ghost", title: "Ghost").csrfToken
            #expect(token.count == 64)
            #expect(token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            tokens.insert(token)
        }
        #expect(tokens.count == 64)
    }

    @Test("a GET link whose handler changes state only asks; a link declared navigation-only is applied")
    func getChangesNothing() async throws {
        let (app, web) = try await ghostWeb([NotesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            for uri in [
                "/open?url=ghost://dashboard/weather/city?name=Lisbon", "/dashboard/weather/city?name=Lisbon",
                "/open?url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DLisbon",
            ] {
                let page = try await client.get(uri)
                #expect(page.status == 200)
                #expect(page.body.contains("Open this link?"))
                #expect(app.sharedState[.favouriteCity] == "Chicago", "\(uri)")
            }
            let peek = marker()
            let peeked = try await client.get("/dashboard/peek?note=\(peek)")
            #expect(peeked.body.contains("Opened ghost://dashboard/peek?note=\(peek), handled by com.test.notes."))
            #expect(Reached.contains(peek))
            let tab = try await client.get("/open?url=ghost://sports")
            #expect(tab.body.contains("Opened ghost://sports."))
        }
    }

    @Test("HEAD answers wherever GET does, without a body")
    func head() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            for uri in ["/dashboard", "/modules", "/api/weather/Oslo"] {
                let answer = try await client.send(.head, uri)
                #expect(answer.status == 200, "\(uri)")
                #expect(answer.body.isEmpty)
            }
        }
    }

    @Test("/api path parameters are percent-decoded")
    func percentDecoded() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let answer = try await client.get("/api/weather/New%20York")
            #expect(answer.status == 200)
            #expect(answer.body.contains("\"city\":\"New York\""))
        }
    }

    @Test("every response carries the security headers; pages with the token are not stored")
    func securityHeaders() async throws {
        let (_, web) = try await ghostWeb([NotesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let answers = [
                try await client.get("/dashboard"), try await client.get("/api/weather/Oslo"),
                try await client.get("/api/nowhere"), try await client.get("/api/fail"),
                try await client.post("/api/notes", form: "note=x"), try await client.get("/nowhere"),
                try await client.send(.options, "/dashboard"),
            ]
            for answer in answers {
                #expect(answer.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(answer.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("frame-ancestors") == true)
                #expect(answer.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
                #expect(answer.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            }
            #expect(try await client.get("/settings").headers[.cacheControl] == "no-store")
        }
    }

    @Test("a module's header fields replace its type, never the security headers, and a name counts once")
    func moduleHeaderFields() async throws {
        let (_, web) = try await ghostWeb([NotesModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let answer = try await client.get("/api/notes.csv")
            #expect(answer.status == 200)
            #expect(answer.headers[fields: .contentType].map(\.value) == ["text/csv"])
            #expect(answer.headers[fields: HTTPField.Name("X-Frame-Options")!].map(\.value) == ["DENY"])
            #expect(answer.headers[fields: HTTPField.Name("X-Note")!].count == 1)
        }
    }

    @Test("a body over the limit is refused with 413, too many header fields with 431")
    func limits() async throws {
        let (app, web) = try await ghostWeb(options: WebHostOptions(maximumBodySize: 1_024, maximumHeaderCount: 20))
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let token = try await client.token()
            let padding = String(repeating: "x", count: 2_000)
            let large = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke&pad=\(padding)")
            #expect(large.status == 413)
            #expect(large.body.contains("at most 1024 bytes"))
            var headers = HTTPFields()
            for index in 0..<25 { headers[HTTPField.Name("X-Padding-\(index)")!] = "x" }
            let crowded = try await client.send(.get, "/dashboard", headers: headers)
            #expect(crowded.status == 431)
            #expect(await app.state(of: "com.ghost.weather") == .active)
        }
    }
}

/// Reads the weather through `@Injected` in its route's handler, code the host runs after the route factory.
struct ForecastReader: Sendable {
    @Injected(.weatherData) var weather
}

struct ForecastRouteModule: Module {
    static let manifest = Manifest(
        id: "com.test.forecast-route", version: "1.0.0", requires: [.module("com.ghost.weather", from: "1.0.0")])
    static func register(in module: inout ModuleRegistrar) {
        module.services.use(.weatherData)
        module.route(.get, "/forecast/:city") { request in
            let city = request.parameters["city"] ?? ""
            return .json("\(try ForecastReader().weather().weather(in: city)?.temperature ?? 0)")
        }
    }
}

/// Answers with what HTTP cannot carry: a status outside 200 to 599, or 70,000 header fields.
struct ImpossibleResponsesModule: Module {
    static let manifest = Manifest(id: "com.test.impossible", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.route(.get, "/impossible-headers") { _ in
            WebResponse(
                headers: Dictionary(uniqueKeysWithValues: (0..<70_000).map { ("X-Field-\($0)", "x") }), body: "many")
        }
        module.route(.get, "/impossible-status/:status") { request in
            WebResponse(status: Int(request.parameters["status"] ?? "") ?? 0, body: "impossible")
        }
    }
}
