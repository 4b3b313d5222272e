import Mosaic
import MosaicKernel
import Synchronization
import Testing

/// A module that contributes one panel to `point` for each `(id, priority)`.
func contributor(
    _ id: ModuleID, to point: ExtensionPoint<Panel> = .dashboardWidgets, _ items: [(String, Int)],
    entitlements: Set<Entitlement> = [],
    onActivate: @escaping @Sendable (ActivationContext) async throws -> Void = { _ in }
) -> ModuleFactory {
    serviceModule(id, entitlements: entitlements, onActivate: onActivate) { module in
        for (item, priority) in items {
            module.contribute(to: point, id: item, priority: priority, title: item) { Panel(.text("\(id)/\(item)")) }
        }
    }
}

/// Reads `feed` until a list satisfies `accept`, and returns that list's identifiers.
func firstList<Content>(
    _ feed: Feed<[Contribution<Content>]>, where accept: ([String]) -> Bool
) async -> [String]? {
    for await list in feed where accept(list.map(\.id)) { return list.map(\.id) }
    return nil
}

@Suite struct ContributionTests {
    @Test("the host reads a point's contributions by priority, then module, then id, each with its module")
    func mediatedOrder() async throws {
        let kernel = makeKernel([
            contributor("com.app.sports", [("scores", 50)]),
            contributor("com.app.weather", [("forecast", 100), ("radar", 50)]),
            contributor("com.app.art", [("painting", 50)]),
        ])
        try await kernel.boot()
        let widgets = kernel.contributions(for: .dashboardWidgets)
        #expect(widgets.map(\.id) == ["forecast", "painting", "scores", "radar"])
        #expect(widgets.map(\.module) == ["com.app.weather", "com.app.art", "com.app.sports", "com.app.weather"])
        #expect(try await widgets[0].content() == Panel(.text("com.app.weather/forecast")))
        #expect(kernel.contributions(for: .sidebar).isEmpty)
        await kernel.shutdown()
    }

    @Test("the order is the same across 1,000 shuffled registration orders")
    func orderIgnoresRegistration() async throws {
        let items: [ModuleID: [(String, Int)]] = [
            "com.app.a": [("a1", 5), ("a2", 5), ("a3", 1)], "com.app.b": [("b1", 5), ("b2", 9)],
            "com.app.c": [("c1", 1), ("c2", 5)], "com.app.d": [("d1", 9)], "com.app.e": [("e1", 0), ("e2", 5)],
        ]
        var orders: Set<[String]> = []
        for _ in 0..<1_000 {
            let kernel = makeKernel(items.shuffled().map { contributor($0.key, $0.value.shuffled()) })
            try await kernel.boot()
            orders.insert(kernel.contributions(for: .dashboardWidgets).map(\.id))
        }
        #expect(orders == [["b2", "d1", "a1", "a2", "b1", "c2", "e2", "a3", "c1", "e1"]])
    }

    @Test("a title-ordered point lists by title whatever the priority")
    func titleOrder() async throws {
        let kernel = makeKernel([
            contributor("com.app.b", to: .settings, [("Privacy", 100)]),
            contributor("com.app.a", to: .settings, [("Account", 0), ("Notifications", 50)]),
        ])
        try await kernel.boot()
        #expect(kernel.contributions(for: .settings).map(\.id) == ["Account", "Notifications", "Privacy"])
        await kernel.shutdown()
    }

    @Test("content factories take services as a typed pack, resolved from the contributing module")
    func contentWithServices() async throws {
        let kernel = makeKernel([
            serviceModule("com.app.time") { $0.services.singleton(.clock) { FixedClock(now: 7) } },
            serviceModule("com.app.weather") { module in
                module.contribute(to: .dashboard, id: "weather", title: "Weather", icon: "cloud") {
                    (clock: any Clock) in Panel(.heading("Weather"), .facts([Fact("now", "\(clock.now)")]))
                }
            },
        ])
        let report = try await kernel.boot()
        #expect(report.count("active") == 2)
        let panel = try await kernel.contributions(for: .dashboard)[0].content()
        #expect(panel == Panel(.heading("Weather"), .facts([Fact("now", "7")])))
        #expect(kernel.contributions(for: .dashboard)[0].metadata.icon == "cloud")
        await kernel.shutdown()
    }

    @Test("a module collects what the modules it depends on contributed (Spezi's Collect)")
    func collect() async throws {
        let collected = Locked<[Panel]>([])
        let kernel = makeKernel([
            contributor("com.app.weather", [("forecast", 1)]),
            contributor("com.app.art", [("painting", 2)]),
            serviceModule(
                "com.app.dashboard", requires: [.module("com.app.weather"), .module("com.app.art")],
                onActivate: { context in
                    let values = try await context.contributions.values(of: .dashboardWidgets)
                    collected.withLock { $0 = values }
                }
            ) { _ in },
        ])
        try await kernel.boot()
        #expect(
            collected.withLock { $0 } == [
                Panel(.text("com.app.art/painting")), Panel(.text("com.app.weather/forecast")),
            ])
        await kernel.shutdown()
    }

    @Test("observers see the list change on revoke and grant, and the stream ends at shutdown", .timeLimit(.minutes(1)))
    func liveUpdates() async throws {
        let kernel = makeKernel(
            [
                contributor("com.app.weather", [("forecast", 100)], entitlements: ["weather"]),
                contributor("com.app.art", [("painting", 50)]),
            ], entitlements: ["weather"])
        let updates = kernel.updates(of: .dashboardWidgets)
        try await kernel.boot()
        #expect(await firstList(updates) { $0 == ["forecast", "painting"] } != nil)
        try await kernel.revoke("weather")
        #expect(kernel.contributions(for: .dashboardWidgets).map(\.id) == ["painting"])
        #expect(await firstList(updates) { $0 == ["painting"] } != nil)
        try await kernel.grant("weather")
        #expect(await firstList(updates) { $0 == ["forecast", "painting"] } != nil)
        await kernel.shutdown()
        #expect(kernel.contributions(for: .dashboardWidgets).isEmpty)
        #expect(await firstList(updates) { _ in false } == nil, "the stream ends at shutdown")
    }

    @Test("a contribution can require an entitlement of its own; the module runs either way")
    func contributionEntitlement() async throws {
        let kernel = makeKernel([
            serviceModule("com.app.weather") { module in
                module.contribute(to: .toolbar, id: "radar", title: "Radar", requires: "premium") {
                    NavigationItem(target: "ghost://weather/radar")
                }
                module.contribute(to: .toolbar, id: "today", title: "Today") { NavigationItem(target: "/weather") }
            }
        ])
        try await kernel.boot()
        #expect(kernel.contributions(for: .toolbar).map(\.id) == ["today"])
        try await kernel.grant("premium")
        #expect(kernel.contributions(for: .toolbar).map(\.id) == ["radar", "today"])
        #expect(await kernel.state(of: "com.app.weather")?.isActive == true)
        await kernel.shutdown()
    }
}
