import Mosaic
import MosaicKernel
import Synchronization
import Testing

struct CityChanged: Sendable, Equatable { let name: String }
struct ScoreChanged: Sendable { let points: Int }

/// The activation contexts modules were given, so a test can act as a module.
final class Contexts: Sendable {
    private let all = Locked<[ModuleID: ActivationContext]>([:])
    func keep(_ context: ActivationContext) { all.withLock { $0[context.id] = context } }
    subscript(id: ModuleID) -> ActivationContext? { all.withLock { $0[id] } }
}

/// A module that hands its activation context to `contexts`.
func eventModule(_ id: ModuleID, entitlements: Set<Entitlement> = [], contexts: Contexts) -> ModuleFactory {
    serviceModule(
        id, entitlements: entitlements, onActivate: { contexts.keep($0) },
        register: { module in
            for key in [StateKey<Int>.counter, .weatherOnly, .stock] { module.writes(key) }
            module.writes(.preferences)
        })
}

/// A booted kernel running one event module, `com.app.weather`, with the module's context and ledger.
func bootWeather() async throws -> (kernel: Kernel, weather: ActivationContext, ledger: ModuleLedger) {
    let contexts = Contexts()
    let kernel = makeKernel([eventModule("com.app.weather", contexts: contexts)])
    try await kernel.boot()
    let weather = try #require(contexts["com.app.weather"])
    return (kernel, weather, try #require(weather.ledger))
}

@Suite(.timeLimit(.minutes(1))) struct EventTests {
    @Test("subscribers receive typed events with the sender the kernel stamped, in publishing order")
    func typedAndStamped() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([
            eventModule("com.app.weather", contexts: contexts), eventModule("com.app.dashboard", contexts: contexts),
        ])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let dashboard = try #require(contexts["com.app.dashboard"])
        var cities = dashboard.events.subscribe(to: CityChanged.self).makeAsyncIterator()
        let scores = dashboard.events.subscribe(to: ScoreChanged.self)
        try weather.events.publish(CityChanged(name: "Oslo"))
        try kernel.events.publish(CityChanged(name: "Lima"))
        let first = await cities.next()
        let second = await cities.next()
        #expect(first?.event == CityChanged(name: "Oslo") && first?.sender == "com.app.weather")
        #expect(second?.event == CityChanged(name: "Lima") && second?.sender == "mosaic.host")
        #expect(first?.sequence == 1 && second?.sequence == 2)
        await kernel.shutdown()
        #expect(await scores.first { _ in true } == nil, "no score was published; the stream ends at shutdown")
    }

    @Test("a deactivated module can no longer publish, even with a handle it kept, and its subscriptions end")
    func spoofingAndEnd() async throws {
        let contexts = Contexts()
        let kernel = makeKernel(
            [eventModule("com.app.weather", entitlements: ["weather"], contexts: contexts)], entitlements: ["weather"])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let subscription = weather.events.subscribe(to: CityChanged.self)
        try await kernel.revoke("weather")
        let error = #expect(throws: EventError.self) { try weather.events.publish(CityChanged(name: "Spoofed")) }
        #expect(
            error?.message
                == "com.app.weather is not active, so it cannot publish CityChanged; events come only from active modules."
        )
        #expect(await subscription.first { _ in true } == nil, "the module's subscription ended with it")
        await kernel.shutdown()
    }

    @Test("a subscriber that never reads does not hold up the publisher; it keeps the newest events and sees the gap")
    func slowSubscriber() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([
            eventModule("com.app.weather", contexts: contexts), eventModule("com.app.slow", contexts: contexts),
        ])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let slow = try #require(contexts["com.app.slow"])
        let subscription = slow.events.subscribe(to: ScoreChanged.self, buffer: 8)
        for points in 1...10_000 { try weather.events.publish(ScoreChanged(points: points)) }
        await kernel.shutdown()
        var received: [UInt64] = []
        for await envelope in subscription { received.append(envelope.sequence) }
        #expect(received == Array(9_993...10_000))
    }

    @Test("a subscriber whose task is cancelled stops reading, and its module forgets the subscription")
    func cancelledSubscriber() async throws {
        let (kernel, weather, ledger) = try await bootWeather()
        let before = ledger.holdingCount
        let cities = weather.events.subscribe(to: CityChanged.self)
        #expect(ledger.holdingCount == before + 1)
        let (received, receivedContinuation) = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            var names: [String] = []
            for await envelope in cities {
                names.append(envelope.event.name)
                receivedContinuation.yield()
            }
            return names
        }
        try weather.events.publish(CityChanged(name: "Oslo"))
        _ = await received.first { _ in true }
        reader.cancel()
        #expect(await reader.value == ["Oslo"])
        #expect(ledger.holdingCount == before, "the cancelled subscription was withdrawn from the ledger")
        try weather.events.publish(CityChanged(name: "Lima"))
        await kernel.shutdown()
    }
}
