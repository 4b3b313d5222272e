import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import Testing

/// Who may change the app (grant, revoke, resubmit): anyone on a loopback-only server, an operator with the key
/// otherwise, and nobody on a network server without one.
@Suite("Operator key")
struct OperatorKeyTests {
    static let key = "a-long-operator-secret-0123456789"

    @Test("served on a network without an operator key, a change with a valid form token is refused, naming the fix")
    func networkWithoutKey() async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.router(servedOn: .network)).test(.router) { client in
            let refused = try await client.post(
                "/settings/entitlements", form: "csrf=\(try await client.token())&entitlement=weather&action=revoke")
            #expect(refused.status == 403)
            #expect(refused.body.contains("no operator key"))
            #expect(refused.body.contains("--operator-key-file"))
            #expect(refused.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            let resubmit = try await client.post(
                "/modules/undelivered", form: "csrf=\(try await client.token())&delivery=1")
            #expect(resubmit.status == 403)
        }
        #expect(await app.state(of: "com.ghost.weather") == .active)
    }

    @Test("the admin port serves the control plane: its page lists the forms, and a change there runs no module page")
    func controlPlaneOnAdminPort() async throws {
        let (app, web) = try await ghostWeb()
        try await Application(router: web.adminRouter(servedOn: .loopback)).test(.router) { client in
            let page = try await client.get("/")
            #expect(page.status == 200)
            #expect(page.body.contains("data-entitlement=\"weather\""))
            #expect(page.body.contains("action=\"/settings/entitlements\""))
            // No module's content on the admin port: the shell's regions are empty.
            #expect(!page.body.contains("data-module="))
            let revoked = try await client.post(
                "/settings/entitlements", form: "csrf=\(web.csrfToken)&entitlement=weather&action=revoke")
            #expect(revoked.status == 303 && revoked.headers[.location] == "/")
            #expect(await app.state(of: "com.ghost.weather") != .active)
            let unknown = try await client.post(
                "/settings/entitlements", form: "csrf=\(web.csrfToken)&entitlement=nothing&action=grant")
            #expect(unknown.status == 400 && unknown.body.contains("Unknown entitlement"))
        }
        try await Application(router: web.adminRouter()).test(.router) { client in
            let refused = try await client.post(
                "/settings/entitlements", form: "csrf=\(web.csrfToken)&entitlement=weather&action=grant")
            #expect(refused.status == 403 && refused.body.contains("no operator key"))
        }
        #expect(await app.state(of: "com.ghost.weather") != .active)
    }

    @Test("/metrics is served on the admin port, and publicly only on loopback")
    func metricsForOperators() async throws {
        let (_, ghost) = try await ghostWeb()
        let web = WebHost(
            kernel: ghost.kernel, catalog: ghost.catalog, scheme: "ghost", title: "Ghost",
            operations: OperationsOptions(metrics: { "mosaic_modules 7\n" }))
        for (router, status) in [
            (web.router(servedOn: .network), 404), (web.router(servedOn: .loopback), 200), (web.adminRouter(), 200),
        ] {
            try await Application(router: router).test(.router) { client in
                let answer = try await client.get("/metrics")
                #expect(answer.status == status)
            }
        }
    }

    @Test("with an operator key, a change needs it, in the form or as a bearer token, wherever the router is served")
    func withKey() async throws {
        let (app, web) = try await ghostWeb(options: WebHostOptions(operatorKey: Self.key))
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let settings = try await client.get("/settings").body
            #expect(settings.contains("name=\"operator_key\""))
            #expect(!settings.contains(Self.key))
            let token = try await client.token()
            let missing = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke")
            #expect(missing.status == 403 && missing.body.contains("The operator key is needed"))
            let wrong = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=revoke&operator_key=guess")
            #expect(wrong.status == 403)
            #expect(await app.state(of: "com.ghost.weather") == .active)

            let revoked = try await client.post(
                "/settings/entitlements",
                form: "csrf=\(token)&entitlement=weather&action=revoke&operator_key=\(Self.key)")
            #expect(revoked.status == 303)
            #expect(await app.state(of: "com.ghost.weather") != .active)

            let granted = try await client.post(
                "/settings/entitlements", form: "csrf=\(token)&entitlement=weather&action=grant",
                headers: [.authorization: "Bearer \(Self.key)"])
            #expect(granted.status == 303)
            #expect(await app.state(of: "com.ghost.weather") == .active)
        }
    }

    @Test("a server bound to 0.0.0.0 refuses a change without the operator key; one bound to loopback takes it")
    func boundAddress() async throws {
        #expect(WebHost.Exposure(address: "0.0.0.0") == .network)
        #expect(WebHost.Exposure(address: "127.0.0.1") == .loopback)
        #expect(WebHost.Exposure(address: "::1") == .loopback)
        for (address, status) in [("0.0.0.0", "403"), ("127.0.0.1", "303")] {
            let (app, web) = try await ghostWeb()
            let form = "csrf=\(web.csrfToken)&entitlement=weather&action=revoke"
            let request =
                "POST /settings/entitlements HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n" + form
            // The server shuts the kernel down when it stops: the module's state is read while it serves.
            let (answer, state) = try await withServer(web, address: address) { port, _ in
                (try await RawHTTP.exchange(port: port, request), await app.state(of: "com.ghost.weather"))
            }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(address): \(answer.prefix(200))")
            #expect((state == .active) == (status == "403"), "\(address)")
        }
    }
}
