import Hummingbird
import HummingbirdTesting
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Testing

/// A module with a sidebar item, a dashboard widget and a route, whose `deactivate()` waits at a gate: while it
/// waits, the module refuses calls but its contributions are still listed.
struct LeavingModule: Module {
    static let manifest = Manifest(id: "com.test.leaving", version: "1.0.0", entitlements: ["weather"])
    static let (deactivating, enterDeactivation) = AsyncStream.makeStream(of: Void.self)
    static let (gate, openGate) = AsyncStream.makeStream(of: Void.self)

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .sidebar, id: "leaving", title: "Leaving") { (context: ActivationContext) in
            NavigationItem(target: context.url(forTab: "dashboard"))
        }
        module.contribute(to: .dashboardWidgets, id: "leaving.widget", title: "Leaving widget") {
            Panel(.text("still here"))
        }
        module.route(.get, "/leaving") { _ in WebResponse(body: "still here") }
    }

    func deactivate() async {
        Self.enterDeactivation.yield()
        for await _ in Self.gate { break }
    }
}

/// A module whose sidebar item, listed before every other, waits at a gate the first time it is built: a page
/// render then holds the list of items taken before whatever the test does meanwhile.
struct BlockerModule: Module {
    static let manifest = Manifest(id: "com.test.blocker", version: "1.0.0")
    static let (building, enterBuilding) = AsyncStream.makeStream(of: Void.self)
    static let (gate, openGate) = AsyncStream.makeStream(of: Void.self)

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .sidebar, id: "blocker", priority: 1_000, title: "Blocker") {
            (context: ActivationContext) in
            enterBuilding.yield()
            for await _ in gate { break }
            return NavigationItem(target: context.url(forTab: "dashboard"))
        }
    }
}

@Suite("A module that is leaving", .serialized)
struct LeavingModuleTests {
    @Test("a page that listed a module's item just before the module began to deactivate leaves the item out")
    func itemListedBeforeLeaving() async throws {
        let (app, web) = try await ghostWeb([BlockerModule.self, LeavingModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            async let page = client.get("/dashboard")
            for await _ in BlockerModule.building { break }
            // The render holds the sidebar's list, Leaving's item in it; now Leaving starts to deactivate.
            let revoking = Task { try await app.kernel.revoke("weather") }
            for await _ in LeavingModule.deactivating { break }
            BlockerModule.openGate.yield()
            let dashboard = try await page
            #expect(dashboard.status == 200)
            #expect(dashboard.body.contains("Blocker") && !dashboard.body.contains(">Leaving<"))
            LeavingModule.openGate.yield()
            try await revoking.value
        }
    }

    @Test("while a module deactivates, pages leave its item and widget out and its route is gone: no 500")
    func pagesWhileLeaving() async throws {
        let (app, web) = try await ghostWeb([LeavingModule.self])
        try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            let revoking = Task { try await app.kernel.revoke("weather") }
            for await _ in LeavingModule.deactivating { break }
            let dashboard = try await client.get("/dashboard")
            #expect(dashboard.status == 200)
            #expect(!dashboard.body.contains("Leaving"))
            let settings = try await client.get("/settings")
            #expect(settings.status == 200)
            let route = try await client.get("/api/leaving")
            #expect(route.status == 404)
            LeavingModule.openGate.yield()
            try await revoking.value
            #expect(await app.state(of: "com.test.leaving") != .active)
        }
    }
}
