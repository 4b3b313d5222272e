import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import Testing

/// Who may change the app (grant, revoke, resubmit): whoever presents the operator key, however the host is
/// reached; nobody without a key set, unless the development opt-in lets a local request through.
@Suite("Operator key")
struct OperatorKeyTests {
    static let key = OperatorKey.random()
    static var secret: String { key.secret }

    static func keyed() -> WebHostOptions { WebHostOptions(operatorKey: key) }

    @Test("without an operator key, a change with a valid form token is refused wherever it is served, naming the fix")
    func withoutKey() async throws {
        let (app, web) = try await ghostWeb(options: WebHostOptions())
        for router in [web.router(servedOn: .loopback), web.router(servedOn: .network), web.adminRouter()] {
            try await Application(router: router).test(.router) { client in
                let refused = try await client.post(
                    "/settings/entitlements", form: "csrf=\(web.csrfToken)&entitlement=weather&action=revoke")
                #expect(refused.status == 403)
                #expect(refused.body.contains("no operator key"))
                #expect(refused.body.contains("--operator-key-file"))
                #expect(refused.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                let resubmit = try await client.post("/modules/undelivered", form: "csrf=\(web.csrfToken)&delivery=1")
                #expect(resubmit.status == 403)
            }
        }
        #expect(await app.state(of: "com.ghost.weather") == .active)
    }

    @Test("the unsafe opt-in takes a local change without a key, but never one that came through a proxy")
    func unsafeOptIn() async throws {
        var options = WebHostOptions()
        options.unsafeChangesWithoutKeyOnLoopback = true
        let (app, web) = try await ghostWeb(options: options)
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let form = "csrf=\(web.csrfToken)&entitlement=weather&action=revoke"
            for header in ["Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "x-forwarded-proto"] {
                let proxied = try await client.post(
                    "/settings/entitlements", form: form, headers: [HTTPField.Name(header)!: "for=203.0.113.7"])
                #expect(proxied.status == 403, "\(header)")
            }
            #expect(await app.state(of: "com.ghost.weather") == .active)
            #expect(try await client.post("/settings/entitlements", form: form).status == 303)
            #expect(await app.state(of: "com.ghost.weather") != .active)
        }
        try await Application(router: web.router(servedOn: .network)).test(.router) { client in
            let refused = try await client.post(
                "/settings/entitlements", form: "csrf=\(web.csrfToken)&entitlement=weather&action=grant")
            #expect(refused.status == 403, "the opt-in is for loopback only")
        }
    }

    @Test("the admin port serves the control plane and the operator detail; a change there runs no module page")
    func controlPlaneOnAdminPort() async throws {
        let (app, web) = try await ghostWeb(options: Self.keyed())
        try await Application(router: web.adminRouter(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/")
            #expect(page.status == 200)
            #expect(page.body.contains("data-entitlement=\"weather\""))
            #expect(page.body.contains("action=\"/settings/entitlements\""))
            #expect(page.body.contains("<h2>Configuration</h2>") || page.body.contains("Configuration"))
            // No module's content on the admin port: the shell's regions are empty.
            #expect(!page.body.contains("data-module="))
            let revoked = try await client.post(
                "/settings/entitlements",
                form: "csrf=\(web.csrfToken)&entitlement=weather&action=revoke&operator_key=\(Self.secret)")
            #expect(revoked.status == 303 && revoked.headers[.location] == "/")
            #expect(await app.state(of: "com.ghost.weather") != .active)
            let unknown = try await client.post(
                "/settings/entitlements",
                form: "csrf=\(web.csrfToken)&entitlement=nothing&action=grant&operator_key=\(Self.secret)")
            #expect(unknown.status == 400 && unknown.body.contains("Unknown entitlement"))
        }
    }

    @Test("/metrics and operator detail are served on the admin port only")
    func operatorDetailOnTheAdminPort() async throws {
        let (_, ghost) = try await ghostWeb()
        let web = WebHost(
            kernel: ghost.kernel, catalog: ghost.catalog, scheme: "ghost", title: "Ghost",
            operations: OperationsOptions(metrics: { "mosaic_modules 7\n" }))
        for (router, status) in [
            (web.router(servedOn: .network), 404), (web.router(servedOn: .loopback), 404), (web.adminRouter(), 200),
        ] {
            try await Application(router: router).test(.router) { client in
                let answer = try await client.get("/metrics")
                #expect(answer.status == status)
            }
        }
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let modules = try await client.get("/modules").body
            #expect(modules.contains("data-state=\"active\""))
            #expect(!modules.contains("<h2>Diagnostics</h2>") && !modules.contains("<h2>Configuration"))
            #expect(modules.contains("on the admin port"))
        }
    }

    @Test("a change needs the key, in the form, as a bearer token in any case of the scheme, or in the sign-in cookie")
    func withKey() async throws {
        let (app, web) = try await ghostWeb(options: Self.keyed())
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let settings = try await client.get("/settings").body
            #expect(settings.contains("name=\"operator_key\""))
            #expect(!settings.contains(Self.secret))
            let token = try await client.token()
            let missing = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke")
            #expect(missing.status == 403 && missing.body.contains("The operator key is needed"))
            let wrong = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke&operator_key=guess")
            #expect(wrong.status == 403 && wrong.body.contains("Wrong operator key"))
            #expect(await app.state(of: "com.ghost.weather") == .active)

            let revoked = try await client.post(
                "/settings/entitlements",
                form: "csrf=\(token)&entitlement=weather&action=revoke&operator_key=\(Self.secret)")
            #expect(revoked.status == 303)
            #expect(await app.state(of: "com.ghost.weather") != .active)
            for scheme in ["Bearer", "bearer", "BEARER"] {
                let granted = try await client.post(
                    "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=grant",
                    headers: [.authorization: "\(scheme) \(Self.secret)"])
                #expect(granted.status == 303, "\(scheme)")
            }
            #expect(await app.state(of: "com.ghost.weather") == .active)

            // The URL a host prints signs in: the cookie it sets carries the key to the forms, whose field is empty.
            let signIn = try await client.get("/operator?key=\(Self.secret)")
            #expect(signIn.status == 303 && signIn.headers[.location] == "/settings")
            let cookie = try #require(signIn.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let withCookie = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke&operator_key=",
                headers: [.cookie: String(cookie.prefix { $0 != ";" })])
            #expect(withCookie.status == 303)
            #expect(await app.state(of: "com.ghost.weather") != .active)
            #expect(try await client.get("/operator?key=guess").status == 403)
        }
    }

    @Test("repeated wrong keys from one client are slowed: the sixth within a minute is answered 429, even a right one")
    func wrongKeysSlowed() async throws {
        let clock = ManualClock()
        let (ghost, host) = try await ghostWeb()
        let web = WebHost(
            kernel: ghost.kernel, catalog: host.catalog, scheme: "ghost", title: "Ghost", options: Self.keyed(),
            operations: OperationsOptions(clock: clock))
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let form = "csrf=\(web.csrfToken)&entitlement=weather&action=revoke&operator_key="
            for _ in 0..<5 {
                #expect(try await client.post("/settings/entitlements", form: form + "guess").status == 403)
            }
            let slowed = try await client.post("/settings/entitlements", form: form + Self.secret)
            #expect(slowed.status == 429)
            #expect(slowed.headers[.retryAfter] == "60")
            #expect(await ghost.state(of: "com.ghost.weather") == .active)
            clock.advance(by: .seconds(60))
            #expect(try await client.post("/settings/entitlements", form: form + Self.secret).status == 303)
        }
    }

    @Test("keys are checked: too short, too long or with a character a header would change are refused, with the fix")
    func keysChecked() throws {
        for (secret, code) in [
            ("short", OperatorKeyError.Code.tooShort), (String(repeating: "a", count: 257), .tooLong),
            (String(repeating: "a", count: 40) + " x", .invalidCharacter),
            (String(repeating: "a", count: 40) + "é", .invalidCharacter),
        ] {
            let error = #expect(throws: OperatorKeyError.self) { try OperatorKey(secret) }
            #expect(error?.code == code, "\(secret.prefix(10))")
            #expect(error?.message.contains("openssl rand -hex 32") == true || code == .tooLong)
        }
        let random = OperatorKey.random()
        #expect(random.secret.count == 64 && random.matches(random.secret))
        #expect(!random.matches(random.secret + "0") && !random.matches(String(random.secret.dropLast())))
        #expect(!random.matches("") && "\(random)" == "(operator key)")
        #expect(OperatorKey.random() != random)
    }

    @Test("a server bound to 0.0.0.0 and one bound to loopback both refuse a change without the operator key")
    func boundAddress() async throws {
        #expect(WebHost.Exposure(address: "0.0.0.0") == .network)
        #expect(WebHost.Exposure(address: "127.0.0.1") == .loopback)
        #expect(WebHost.Exposure(address: "::1") == .loopback)
        for address in ["0.0.0.0", "127.0.0.1"] {
            let (app, web) = try await ghostWeb(options: Self.keyed())
            let form = "csrf=\(web.csrfToken)&entitlement=weather&action=revoke"
            let request =
                "POST /settings/entitlements HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n" + form
            // The server shuts the kernel down when it stops: the module's state is read while it serves.
            let (answer, state) = try await withServer(web, address: address) { port, _ in
                (try await RawHTTP.exchange(port: port, request), await app.state(of: "com.ghost.weather"))
            }
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(address): \(answer.prefix(200))")
            #expect(state == .active, "\(address)")
        }
    }

    @Test("the admin port holds modules off for a bisection and brings every one back, with the key only")
    func holdOffForBisection() async throws {
        let (app, web) = try await ghostWeb(options: Self.keyed())
        try await Application(router: web.adminRouter()).test(.router) { client in
            let key: HTTPFields = [.authorization: "Bearer \(Self.secret)"]
            let form = "csrf=\(web.csrfToken)&modules="
            #expect(try await client.post("/modules/hold", form: form + "com.ghost.weather").status == 403)
            #expect(await app.state(of: "com.ghost.weather") == .active)

            let held = try await client.post("/modules/hold", form: form + "com.ghost.weather", headers: key)
            #expect(held.status == 200 && held.body.contains("held off: com.ghost.weather"), "\(held.body)")
            let active = try #require(held.body.split(separator: "\n").first { $0.hasPrefix("active: ") })
            #expect(active.contains("com.ghost.location") && !active.contains("com.ghost.weather"), "\(active)")
            #expect(await app.state(of: "com.ghost.weather") != .active)

            let back = try await client.post("/modules/hold", form: form, headers: key)
            #expect(back.status == 200 && back.body.contains("com.ghost.weather"), "\(back.body)")
            #expect(await app.state(of: "com.ghost.weather") == .active)
            let unknown = try await client.post("/modules/hold", form: form + "com.nobody.here", headers: key)
            #expect(unknown.status == 400 && unknown.body.contains("com.nobody.here"), "\(unknown.body)")

            let restart = try await client.post(
                "/modules/restart", form: "csrf=\(web.csrfToken)&module=com.ghost.weather", headers: key)
            #expect(restart.status == 303, "a module that is not failed is left as it is")
            let nobody = try await client.post(
                "/modules/restart", form: "csrf=\(web.csrfToken)&module=com.nobody.here", headers: key)
            #expect(nobody.status == 404)
        }
    }
}
