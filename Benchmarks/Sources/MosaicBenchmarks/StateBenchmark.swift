import Logging
import Mosaic
import MosaicKernel

extension StateKey where Value == Int {
    static var benchmarkCounter: Self { StateKey("bench.counter", initial: 0) }
}

/// Write-to-observer latency with one observer, and fan-out of one write to 1,000 observers.
func runStateBenchmark() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    for observers in [1, 1_000] {
        let kernel = Kernel(catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), logger: quiet)
        try await kernel.boot()
        let state = kernel.state
        let counter = DeliveryCounter()
        let (done, signal) = AsyncStream.makeStream(of: Int.self)
        for _ in 0..<observers {
            let values = state.values(of: .benchmarkCounter)
            Task {
                for await value in values where value > 0 {
                    let total = counter.value.add(1, ordering: .relaxed).newValue
                    if total.isMultiple(of: observers) { signal.yield(total) }
                }
            }
        }
        var doneIterator = done.makeAsyncIterator()
        var writes: [Double] = []
        var seen: [Double] = []
        for round in 1...60 {
            let start = ContinuousClock.now
            try state.set(.benchmarkCounter, to: round)
            writes.append(start.duration(to: .now).nanoseconds / 1_000)
            _ = await doneIterator.next()
            seen.append(start.duration(to: .now).nanoseconds / 1_000)
        }
        await kernel.shutdown()
        let write = writes.dropFirst(10).sorted()
        let all = seen.dropFirst(10).sorted()
        print(
            "  \(observers) observer\(observers == 1 ? "" : "s"): write returns in \(format(write[25], places: 1)) µs, "
                + "every observer has the value after \(format(all[25], places: 1)) µs (p90 \(format(all[45], places: 1)))")
    }
}
