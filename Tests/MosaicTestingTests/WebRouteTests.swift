import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Synchronization
import Testing

/// A service that counts how often it is built.
struct Tally: Sendable {
    static let builds = Atomic<Int>(0)
}

/// A route and a middleware that each take a ``Tally``, while entitlement `counted` is granted.
struct CountedModule: Module {
    static let manifest = Manifest(id: "com.test.counted", version: "1.0.0", entitlements: ["counted"])
    static func register(in module: inout ModuleRegistrar) {
        module.services.transient(ServiceKey(Tally.self)) {
            Tally.builds.add(1, ordering: .relaxed)
            return Tally()
        }
        module.route(.get, "/counted") { (_: WebRequest, _: Tally) in WebResponse(body: "counted") }
        module.middleware("counted") {
            (request: WebRequest, next: @Sendable (WebRequest) async throws -> WebResponse, _: Tally) in
            try await next(request)
        }
    }
}

/// A route of a module that starts on demand.
struct OnDemandRouteModule: Module {
    static let manifest = Manifest(id: "com.test.on-demand-route", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.activation = .onDemand
        module.route(.get, "/started") { _ in WebResponse(body: "started") }
    }
}

/// A middleware that changes the response as the request's `change` query item says: adds a field, changes or
/// drops the page's `Cache-Control`, or replaces the body.
struct ChangingModule: Module {
    static let manifest = Manifest(id: "com.test.changing", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.middleware("changing") { request, next in
            var response = try await next(request)
            switch request[query: "change"] {
            case "add": response.headers["X-Changed"] = "added"
            case "change": response.headers["Cache-Control"] = "private"
            case "drop": response.headers["Cache-Control"] = nil
            case "body": response.body = "replaced"
            default: break
            }
            return response
        }
    }
}

@Suite("Module routes and middleware")
struct WebRouteTests {
    static let securityHeaders = [
        "Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy",
    ]

    @Test("a middleware's changes to a kept page are sent, with the page's bytes and the security headers once")
    func changesToAKeptPage() async throws {
        let (_, web) = try await ghostWeb([ChangingModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            for change in ["none", "add", "change", "drop", "body"] {
                let answer = try await client.get("/dashboard?change=\(change)")
                #expect(answer.status == 200)
                for name in Self.securityHeaders {
                    #expect(answer.headers[fields: HTTPField.Name(name)!].count == 1, "\(name) after \(change)")
                }
                #expect(answer.headers[values: .contentLength] == ["\(answer.body.utf8.count)"])
                #expect(answer.headers[values: .contentType] == ["text/html; charset=utf-8"])
                #expect(change == "body" ? answer.body == "replaced" : answer.body.hasPrefix("<!doctype html>"))
                #expect(answer.headers[HTTPField.Name("X-Changed")!] == (change == "add" ? "added" : nil))
                let cacheControl = ["change": ["private"], "drop": []][change] ?? ["no-store"]
                #expect(answer.headers[values: .cacheControl] == cacheControl, "Cache-Control after \(change)")
            }
        }
    }

    @Test("a route's and a middleware's handlers are built once per activation, at their first request")
    func builtOncePerActivation() async throws {
        let (app, web) = try await ghostWeb([CountedModule.self])
        try await app.grant("counted")
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            for _ in 0..<3 { #expect(try await client.get("/api/counted").body == "counted") }
            #expect(try await client.get("/dashboard").status == 200)
            // One build for the route, one for the middleware; before, the middleware was built for every request
            // and the route for every request under /api.
            #expect(Tally.builds.load(ordering: .relaxed) == 2)
            try await app.revoke("counted")
            try await app.grant("counted")
            #expect(try await client.get("/api/counted").body == "counted")
            #expect(Tally.builds.load(ordering: .relaxed) == 4, "a new activation builds its handlers anew")
        }
    }

    @Test("a request under /api starts only the on-demand module whose route it matches")
    func onlyTheMatchingRouteStartsItsModule() async throws {
        let (app, web) = try await ghostWeb([OnDemandRouteModule.self], startsOnDemandModules: false)
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let missing = try await client.get("/api/nowhere")
            #expect(missing.status == 404)
            #expect(try await client.get("/api/weather/Oslo").status == 200)
            // Before, every route was built to read its path, starting each on-demand module listed before a match.
            await app.expect("com.test.on-demand-route", .standby)
            #expect(try await client.get("/api/started").body == "started")
            await app.expect("com.test.on-demand-route", .active)
        }
    }

    @Test("two routes of one module with the same method and path are a boot diagnostic")
    func duplicateRoute() async throws {
        struct TwiceModule: Module {
            static let manifest = Manifest(id: "com.test.twice", version: "1.0.0")
            static func register(in module: inout ModuleRegistrar) {
                module.route(.get, "/twice") { _ in WebResponse(body: "first") }
                module.route(.get, "twice/") { _ in WebResponse(body: "second") }
            }
        }
        var harness = TestHarness(TwiceModule.self)
        harness.extensionPoints = WebHost.extensionPoints
        let error = await #expect(throws: HarnessError.self) { try await harness.start() }
        let duplicate = try #require(error?.diagnostics.first { $0.code == .duplicateContribution })
        #expect(duplicate.message.contains("GET /twice"))
    }
}
