import Mosaic
import MosaicKernel
import Synchronization
import Testing

/// Counts the instances of a service alive now, and keeps weak references to them.
final class Census: Sendable {
    private let alive = Atomic<Int>(0)
    private let made = Locked<[Weak]>([])

    struct Weak: @unchecked Sendable {
        // SAFETY: only read and written under `made`'s lock; a weak reference is never dereferenced unsafely.
        weak var object: AnyObject?
    }

    func born(_ object: AnyObject) {
        alive.add(1, ordering: .relaxed)
        made.withLock { $0.append(Weak(object: object)) }
    }

    func died() { alive.subtract(1, ordering: .relaxed) }

    var count: Int { alive.load(ordering: .relaxed) }
    /// How many of the instances made are still referenced.
    var referenced: Int { made.withLock { $0.filter { $0.object != nil }.count } }
    var total: Int { made.withLock { $0.count } }
}

/// A service instance that reports its life to a census.
final class CountedForecast: Forecast, Clock {
    let census: Census
    init(_ census: Census) {
        self.census = census
        census.born(self)
    }
    deinit { census.died() }
    var text: String { "counted" }
    var now: Int { 1 }
}

/// A module that records every step of its life in `journal` and holds one of everything the kernel grants.
func ledgerModule(
    journal: Journal, contexts: Contexts, census: Census? = nil, gate: Gate? = nil, started: Journal? = nil
) -> ModuleFactory {
    ModuleFactory(
        manifest: Manifest(id: "com.app.weather", version: "1.0.0", entitlements: ["weather"]),
        register: { module in
            if let census {
                module.services.singleton(.forecast) { CountedForecast(census) }
                module.services.cached(.clock) { CountedForecast(census) }
            }
            module.writes(.counter)
            module.contribute(to: .dashboardWidgets, id: "weather", title: "Weather") { Panel(.text("weather")) }
            module.handle(CityRoute.self) { route, _ in
                started?.add("handler \(route.name)")
                await gate?.wait()
                journal.add("handler done")
            }
        },
        make: {
            Probe(
                activate: { context in
                    contexts.keep(context)
                    context.task {
                        // Runs until cancelled: an AsyncStream's iteration ends when its task is cancelled.
                        let (never, continuation) = AsyncStream.makeStream(of: Int.self)
                        for await _ in never {}
                        continuation.finish()
                        journal.add("task ended")
                    }
                },
                deactivate: { journal.add("deactivate") })
        })
}

@Suite(.timeLimit(.minutes(1))) struct LedgerTests {
    @Test("revoking a module withdraws its ledger: tasks end before deactivate, streams finish, writes are refused")
    func revokeWithdrawsEverything() async throws {
        let journal = Journal()
        let contexts = Contexts()
        let kernel = makeKernel([ledgerModule(journal: journal, contexts: contexts)], entitlements: ["weather"])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let values = weather.state.values(of: .counter)
        let events = weather.events.subscribe(to: CityChanged.self)
        let observed = weather.contributions.updates(of: .dashboardWidgets)
        let hostObserved = kernel.updates(of: .dashboardWidgets)
        try await weather.state.set(.counter, to: 1)

        try await kernel.revoke("weather")

        #expect(journal.all == ["task ended", "deactivate"], "the task is cancelled and awaited before deactivate")
        var seen: [Int] = []
        for await value in values { seen.append(value) }
        #expect(seen == [1], "the state observer stream finished")
        #expect(await events.first { _ in true } == nil, "the event subscription ended")
        #expect(
            await firstList(observed) { $0.isEmpty } == [], "the module's contribution observer sees the withdrawal")
        for await _ in observed {}
        #expect(await firstList(hostObserved) { $0.isEmpty } == [], "the host sees the withdrawal")
        let refused = await #expect(throws: StateError.self) { try await weather.state.set(.counter, to: 2) }
        #expect(refused?.message.hasPrefix("com.app.weather is not active, so it may no longer write") == true)
        #expect(kernel.sharedState[.counter] == 1)
        await kernel.shutdown()
    }

    @Test("streams a module drops are forgotten by its ledger, so they do not pile up while it is active")
    func droppedStreamsForgotten() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([ledgerModule(journal: Journal(), contexts: contexts)], entitlements: ["weather"])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let ledger = try #require(weather.ledger)
        let before = ledger.holdingCount
        for _ in 0..<1_000 {
            _ = weather.state.values(of: .counter)
            _ = weather.events.subscribe(to: CityChanged.self)
        }
        #expect(ledger.holdingCount == before)
        await kernel.shutdown()
    }

    @Test("a link handler in flight when its module is revoked finishes before the module's deactivate runs")
    func handlerFinishesBeforeDeactivate() async throws {
        let journal = Journal()
        let started = Journal()
        let gate = Gate()
        let kernel = makeKernel(
            [ledgerModule(journal: journal, contexts: Contexts(), gate: gate, started: started)],
            entitlements: ["weather"])
        try await kernel.boot()
        let withdrawn = kernel.updates(of: .dashboardWidgets)
        let link = Task { await kernel.open("ghost://dashboard/weather/city?name=Oslo") }
        await started.first("handler Oslo")
        let revoke = Task { try await kernel.revoke("weather") }
        // The contributions go first; the kernel then waits for the handler before calling deactivate.
        _ = await firstList(withdrawn) { $0.isEmpty }
        gate.open()
        #expect(await link.value == .handled(tab: "dashboard", module: "com.app.weather"))
        try await revoke.value
        #expect(journal.all == ["handler done", "task ended", "deactivate"])
        await kernel.shutdown()
    }

    @Test("a deactivated module's singletons and cached instances are released")
    func servicesReleased() async throws {
        let census = Census()
        let kernel = makeKernel(
            [ledgerModule(journal: Journal(), contexts: Contexts(), census: census)], entitlements: ["weather"])
        try await kernel.boot()
        let services = await kernel.services
        #expect(try services.resolve(.forecast).text == "counted")
        #expect(try services.resolve(.clock).now == 1)
        #expect(census.total == 2)
        try await kernel.revoke("weather")
        #expect(census.referenced == 0, "every instance the module's services built is gone")
        #expect(census.count == 0)
        await kernel.shutdown()
    }

    @Test("10,000 resetCached() cycles release every instance they drop")
    func resetCachedReleases() async throws {
        let census = Census()
        let kernel = makeKernel(
            [ledgerModule(journal: Journal(), contexts: Contexts(), census: census)], entitlements: ["weather"])
        try await kernel.boot()
        let services = await kernel.services
        _ = try services.resolve(.forecast)
        for _ in 0..<10_000 {
            _ = try services.resolve(.clock).now
            await kernel.resetCached()
        }
        #expect(census.count == 1, "only the singleton is alive")
        await kernel.resetAll()
        #expect(census.count == 0)
        await kernel.shutdown()
    }

    @Test("1,000 kernels dropped without shutdown() release their modules (no reference cycle)")
    func droppedKernelsRelease() async throws {
        let census = Census()
        // A cycle keeps every kernel's 2 instances: 2,000, far above the bound. (10,000 kernels took 62 s of the
        // suite's one-minute limit under the thread sanitizer.)
        for _ in 0..<1_000 {
            let kernel = makeKernel(
                [ledgerModule(journal: Journal(), contexts: Contexts(), census: census)], entitlements: ["weather"])
            try await kernel.boot()
            let services = await kernel.services
            _ = try services.resolve(.forecast)
            _ = try services.resolve(.clock)
        }
        #expect(census.total == 2_000)
        #expect(census.count < 100, "instances of dropped kernels are released, not kept by a cycle")
    }

    @Test("after shutdown() every stream the kernel handed out has finished")
    func streamsFinishAtShutdown() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([ledgerModule(journal: Journal(), contexts: contexts)], entitlements: ["weather"])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let hostValues = kernel.sharedState.values(of: .counter)
        let moduleValues = weather.state.values(of: .counter)
        let changes = kernel.stateChanges()
        let updates = kernel.updates(of: .dashboardWidgets)
        let hostEvents = kernel.events.subscribe(to: CityChanged.self)
        await kernel.shutdown()
        for await _ in hostValues {}
        for await _ in moduleValues {}
        for await _ in changes {}
        for await _ in updates {}
        for await _ in hostEvents {}
    }

    // Writing inside a change closure cannot be written: the closure is synchronous, and a write is awaited.
    @Test("reading a key inside update of another key works")
    func readInsideUpdate() async throws {
        let kernel = makeKernel([])
        try await kernel.boot()
        try await kernel.sharedState.set(.counter, to: 41)
        try await kernel.sharedState.update(.preferences) { $0.city = "City \(kernel.sharedState[.counter] + 1)" }
        #expect(kernel.sharedState[.preferences].city == "City 42")
        await kernel.shutdown()
    }
}
