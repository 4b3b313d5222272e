@_spi(Hosting) import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

/// Ghost's weather city link as a typed route.
struct CityRoute: DeeplinkRoute {
    static let tab = "dashboard"
    static let feature = "weather"
    static let action: String? = "city"
    var name: String

    init(name: String) { self.name = name }
    init(link: Deeplink) throws(DeeplinkError) { name = try link.require("name") }
    var query: [QueryItem] { [QueryItem("name", name)] }
}

/// A module handling `CityRoute`, recording into `journal`; its activation waits on `gate` when one is given.
func weatherLinks(journal: Journal, gate: Gate? = nil, entitlements: Set<Entitlement> = []) -> ModuleFactory {
    ModuleFactory(
        manifest: Manifest(id: "com.app.weather", version: "1.0.0", entitlements: entitlements),
        register: { module in
            module.handle(CityRoute.self) { route, _ in journal.add("weather city \(route.name)") }
            module.handle(feature: "weather", requires: "radar") { link, _ in
                journal.add("weather \(link.action ?? "")")
            }
        },
        make: { Probe(activate: { _ in await gate?.wait() }, deactivate: {}) })
}

func linkKernel(
    _ factories: [ModuleFactory], journal: Journal, entitlements: Set<Entitlement> = [],
    options: KernelOptions = KernelOptions()
) -> Kernel {
    Kernel(
        catalog: catalog(factories), host: testHost, entitlements: .granted(entitlements),
        navigator: { tab in journal.add("navigate \(tab)") }, options: options, logger: quietLogger)
}

@Suite struct DeeplinkTests {
    @Test("a link navigates to its tab, then runs the handler of its feature and action, typed")
    func handled() async throws {
        let journal = Journal()
        let kernel = linkKernel([weatherLinks(journal: journal)], journal: journal, entitlements: ["radar"])
        try await kernel.boot()
        let link = CityRoute(name: "New York").link(scheme: "ghost")
        #expect(link.url == "ghost://dashboard/weather/city?name=New%20York")
        #expect(await kernel.open(link.url) == .handled(tab: "dashboard", module: "com.app.weather"))
        #expect(
            await kernel.open("ghost://dashboard/weather/radar")
                == .handled(tab: "dashboard", module: "com.app.weather"))
        #expect(await kernel.open("ghost://sports") == .handled(tab: "sports", module: nil))
        #expect(
            journal.all == [
                "navigate dashboard", "weather city New York", "navigate dashboard", "weather radar", "navigate sports",
            ])
    }

    @Test("unknown features, missing entitlements, bad parameters and bad links say why they were not handled")
    func notHandled() async throws {
        let journal = Journal()
        let kernel = linkKernel(
            [weatherLinks(journal: journal)], journal: journal,
            options: KernelOptions(deeplinkRules: DeeplinkRules(allowedSchemes: ["ghost"])))
        try await kernel.boot()
        func reason(_ text: String) async -> DeeplinkError? {
            if case .notHandled(let error) = await kernel.open(text) { return error }
            return nil
        }
        #expect(await reason("ghost://dashboard/art/show")?.message == "No module handles art/show.")
        #expect(await reason("ghost://dashboard/art/show")?.fix == "Link to a handled feature: weather.")
        #expect(await reason("ghost://dashboard/weather/radar")?.code == .notEntitled)
        #expect(
            await reason("ghost://dashboard/weather/city")?.message
                == "com.app.weather's handler for ghost://dashboard/weather/city threw: ghost://dashboard/weather/city has no \"name\" parameter. Add ?name=… to the link."
        )
        #expect(await reason("https://evil.example/weather")?.code == .schemeNotAllowed)
        #expect(journal.all == ["navigate dashboard"], "only the link whose handler ran (and threw) navigated")
    }

    @Test(
        "a link that arrives before its module is active is delivered when the module activates",
        .timeLimit(.minutes(1)))
    func pendingDelivered() async throws {
        let journal = Journal()
        let gate = Gate()
        let kernel = linkKernel([weatherLinks(journal: journal, gate: gate)], journal: journal)
        let boot = Task { try await kernel.boot() }
        let opened = Task { await kernel.open("ghost://dashboard/weather/city?name=Oslo") }
        #expect(await kernel.state(of: "com.app.weather")?.isActive != true)
        gate.open()
        #expect(await opened.value == .handled(tab: "dashboard", module: "com.app.weather"))
        _ = try await boot.value
        #expect(journal.all == ["navigate dashboard", "weather city Oslo"])
    }

    @Test(
        "a link for a module installed again waits while it activates, whatever state it was uninstalled in",
        .timeLimit(.minutes(1)))
    func reinstalledModuleLinksWait() async throws {
        let journal = Journal()
        // With no room to wait, a link that would wait is answered at once with `.pendingLimit`, and one refused
        // because its module cannot come up with `.moduleInactive`: the test never waits on a link.
        let kernel = linkKernel(
            [weatherLinks(journal: journal)], journal: journal, options: KernelOptions(pendingDeeplinkLimit: 0))
        try await kernel.boot()
        try await kernel.uninstall("com.app.weather")
        let gate = Gate()
        let changes = kernel.stateChanges()
        let install = Task { try await kernel.install(weatherLinks(journal: journal, gate: gate)) }
        for await change in changes where change.id == "com.app.weather" && change.to == .authorized { break }
        // Activating: the link would wait, as for any module on its way up (the router had kept "deactivated",
        // the state the module was uninstalled in, and refused it).
        guard case .notHandled(let early) = await kernel.open("ghost://dashboard/weather/city?name=Oslo") else {
            Issue.record("with no room to wait, a link for an activating module cannot be handled")
            return
        }
        #expect(early.code == .pendingLimit, "\(early.message)")
        gate.open()
        #expect(try await install.value == .active)
        #expect(
            await kernel.open("ghost://dashboard/weather/city?name=Oslo")
                == .handled(tab: "dashboard", module: "com.app.weather"))
        await kernel.shutdown()
    }

    @Test("waiting links are bounded in time and in number")
    func pendingBounded() async throws {
        let journal = Journal()
        let gate = Gate()
        let clock = ManualClock()
        let slow = linkKernel(
            [weatherLinks(journal: journal, gate: gate)], journal: journal,
            options: KernelOptions(
                activationTimeLimit: .seconds(60), pendingDeeplinkTimeLimit: .seconds(5), clock: clock))
        let boot = Task { try await slow.boot() }
        await clock.sleepers(reaching: 1)
        let opened = Task { await slow.open("ghost://dashboard/weather/city?name=Oslo") }
        await clock.sleepers(reaching: 2)
        clock.advance(by: .seconds(5))
        guard case .notHandled(let late) = await opened.value else {
            Issue.record("a link for a module that does not come up in time must not be handled")
            return
        }
        #expect(late.code == .moduleInactive)
        #expect(late.message.hasPrefix("com.app.weather did not become active within"))
        let full = linkKernel(
            [weatherLinks(journal: journal, gate: gate)], journal: journal,
            options: KernelOptions(pendingDeeplinkLimit: 0))
        let fullBoot = Task { try await full.boot() }
        guard case .notHandled(let dropped) = await full.open("ghost://dashboard/weather/city?name=Oslo") else {
            Issue.record("with no room to wait the link must be dropped")
            return
        }
        #expect(dropped.code == .pendingLimit)
        gate.open()
        _ = try await (boot.value, fullBoot.value)
        await slow.shutdown()
        await full.shutdown()
    }

    @Test(
        "a link for a blocked or revoked module is answered at once with the reason, without waiting",
        .timeLimit(.minutes(1)))
    func blockedAnsweredAtOnce() async throws {
        let journal = Journal()
        // The manual clock never moves here: a link that waited for its module would never be answered.
        let kernel = linkKernel(
            [weatherLinks(journal: journal, entitlements: ["weather"])], journal: journal,
            options: KernelOptions(clock: ManualClock()))
        try await kernel.boot()
        guard case .notHandled(let refused) = await kernel.open("ghost://dashboard/weather/city?name=Oslo") else {
            Issue.record("a link for a blocked module must not be handled")
            return
        }
        #expect(refused.code == .moduleInactive)
        #expect(refused.message.contains("blocked") && refused.message.contains("'weather'"), "\(refused.message)")
        try await kernel.grant("weather")
        #expect(
            await kernel.open("ghost://dashboard/weather/city?name=Oslo")
                == .handled(tab: "dashboard", module: "com.app.weather"))
        try await kernel.revoke("weather")
        guard case .notHandled(let revoked) = await kernel.open("ghost://dashboard/weather/city?name=Oslo") else {
            Issue.record("a link for a revoked feature must not be handled")
            return
        }
        #expect(revoked.message.contains("com.app.weather") && revoked.message.contains("blocked"))
        #expect(journal.all == ["navigate dashboard", "weather city Oslo"])
        await kernel.shutdown()
    }

    @Test("two modules handling one feature and action is a diagnostic, and the second cannot run")
    func duplicateHandlers() async throws {
        let journal = Journal()
        let rival = serviceModule("com.app.rival") { $0.handle(CityRoute.self) { _, _ in } }
        let diagnostics = Kernel.validate(catalog(weatherLinks(journal: journal), rival), host: testHost)
            .filter { $0.code == .duplicateDeeplinkHandler }
        #expect(
            diagnostics.map(\.message) == [
                "com.app.weather and com.app.rival both handle the link weather/city; com.app.weather's is kept, com.app.rival cannot run."
            ])
    }

    @Test("opening only what navigates decides on the handler a link really reaches, never another module's catch-all")
    func navigationOnly() async throws {
        let journal = Journal()
        let kernel = linkKernel(
            [
                ModuleFactory(
                    manifest: Manifest(id: "com.app.favourites", version: "1.0.0"),
                    register: { module in
                        module.handle(feature: "weather") { link, _ in journal.add("saved \(link.action ?? "")") }
                    }
                ) { Probe(activate: { _ in }, deactivate: {}) },
                ModuleFactory(
                    manifest: Manifest(id: "com.app.viewer", version: "1.0.0", entitlements: ["viewer"]),
                    register: { module in
                        module.handle(feature: "weather", action: "city", navigatesOnly: true) { _, _ in
                            journal.add("viewed")
                        }
                    }
                ) { Probe(activate: { _ in }, deactivate: {}) },
            ], journal: journal)
        try await kernel.boot()
        // The viewer is blocked (no entitlement): its link is refused, not handed to the favourites' catch-all.
        guard
            case .notHandled(let down) = await kernel.openNavigationOnly(
                try Deeplink(parsing: "ghost://d/weather/city"))
        else {
            Issue.record("a link whose own module is down must not be handled")
            return
        }
        #expect(down.code == .moduleInactive)
        // A link the catch-all handles changes state: it is not run.
        guard
            case .notHandled(let asks) = await kernel.openNavigationOnly(
                try Deeplink(parsing: "ghost://d/weather/save"))
        else {
            Issue.record("a state-changing handler must not run when only navigation is allowed")
            return
        }
        #expect(asks.code == .needsConfirmation)
        #expect(journal.all.isEmpty)
        try await kernel.grant("viewer")
        #expect(
            await kernel.openNavigationOnly(try Deeplink(parsing: "ghost://d/weather/city"))
                == .handled(tab: "d", module: "com.app.viewer"))
        #expect(journal.all == ["navigate d", "viewed"])
        await kernel.shutdown()
    }
}
