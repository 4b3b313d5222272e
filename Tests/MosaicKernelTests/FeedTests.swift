import Mosaic
import MosaicKernel
import Testing

@Suite(.timeLimit(.minutes(1))) struct FeedTests {
    @Test("a feed dropped unread leaves its module's ledger")
    func droppedFeed() async throws {
        let (kernel, weather, ledger) = try await bootWeather()
        let before = ledger.holdingCount
        do {
            let cities = weather.events.subscribe(to: CityChanged.self)
            try weather.events.publish(CityChanged(name: "Oslo"))
            withExtendedLifetime(cities) { #expect(ledger.holdingCount == before + 1) }
        }
        #expect(ledger.holdingCount == before, "the dropped feed was withdrawn from the ledger")
        await kernel.shutdown()
    }

    @Test("a task cancelled before it reads gets nothing, even with events waiting, and its feed ends")
    func readByCancelledTask() async throws {
        let (kernel, weather, ledger) = try await bootWeather()
        let before = ledger.holdingCount
        let cities = weather.events.subscribe(to: CityChanged.self)
        try weather.events.publish(CityChanged(name: "Oslo"))
        try weather.events.publish(CityChanged(name: "Lima"))
        let reader = Task {
            // Waits for its own cancellation, which the test makes before letting it read.
            withUnsafeCurrentTask { $0?.cancel() }
            var names: [String] = []
            for await envelope in cities { names.append(envelope.event.name) }
            return names
        }
        #expect(await reader.value == [])
        #expect(ledger.holdingCount == before, "the cancelled reader's feed was withdrawn from the ledger")
        var later = cities.makeAsyncIterator()
        #expect(await later.next() == nil, "a feed ended by cancellation stays ended")
        await kernel.shutdown()
    }

    @Test("an actor reads a feed: every event arrives in order, and the loop ends when the kernel shuts down")
    func readOnAnActor() async throws {
        let (kernel, weather, _) = try await bootWeather()
        let log = CityLog()
        let cities = weather.events.subscribe(to: CityChanged.self)
        for name in ["Oslo", "Lima", "Kyiv"] { try weather.events.publish(CityChanged(name: name)) }
        let reading = Task { await log.read(cities, count: 3) }
        #expect(await reading.value == ["Oslo", "Lima", "Kyiv"])
        let rest = Task { await log.read(cities, count: .max) }
        await kernel.shutdown()
        #expect(await rest.value == ["Oslo", "Lima", "Kyiv"], "the loop ended with the kernel, nothing more read")
    }

    @Test("a feed that has ended delivers nothing, and a module outside a kernel subscribes to an ended feed")
    func endedFeeds() async {
        var ended = Feed<Int>.ended.makeAsyncIterator()
        #expect(await ended.next() == nil)
        let events = Events(bus: nil, module: "com.app.alone")
        var cities = events.subscribe(to: CityChanged.self).makeAsyncIterator()
        #expect(await cities.next() == nil)
    }
}

/// An actor that keeps the names it read from a feed of city changes.
private actor CityLog {
    private var names: [String] = []

    /// Reads up to `count` events from `cities` on this actor; returns every name read so far.
    func read(_ cities: Feed<EventEnvelope<CityChanged>>, count: Int) async -> [String] {
        var read = 0
        for await envelope in cities {
            names.append(envelope.event.name)
            read += 1
            if read == count { break }
        }
        return names
    }
}
