import Logging
import Mosaic
import MosaicKernel
import Synchronization

struct Tick: Sendable { let round: Int }

final class DeliveryCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// One event to 1,000 subscribers: the publisher's cost, and the time until every subscriber's task has it.
func runEventBenchmark() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), logger: quiet)
    try await kernel.boot()
    let events = kernel.events
    let counter = DeliveryCounter()
    let (done, signal) = AsyncStream.makeStream(of: Int.self)
    let subscribers = 1_000
    for _ in 0..<subscribers {
        let stream = events.subscribe(to: Tick.self, buffer: 1_024)
        Task {
            for await _ in stream {
                let total = counter.value.add(1, ordering: .relaxed).newValue
                if total.isMultiple(of: subscribers) { signal.yield(total) }
            }
        }
    }
    var doneIterator = done.makeAsyncIterator()
    var publishTimes: [Double] = []
    var fanOutTimes: [Double] = []
    for round in 0..<60 {
        let start = ContinuousClock.now
        try events.publish(Tick(round: round))
        publishTimes.append(start.duration(to: .now).nanoseconds / 1_000)
        _ = await doneIterator.next()
        fanOutTimes.append(start.duration(to: .now).nanoseconds / 1_000)
    }
    await kernel.shutdown()
    let publish = publishTimes.dropFirst(10).sorted()
    let fanOut = fanOutTimes.dropFirst(10).sorted()
    print("\nEvents: one event to 1,000 subscriber tasks (release build), µs, median of 50")
    print("  publish (returns to the publisher):        \(format(publish[25], places: 1))")
    print("  until all 1,000 subscribers received it:   \(format(fanOut[25], places: 1)) (p90 \(format(fanOut[45], places: 1)))")
}
