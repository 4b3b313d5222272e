import Logging
import Mosaic
import MosaicKernel
import MosaicPostgres

extension StateKey where Value == Int {
    static var propagated: Self { Self("bench.propagated", initial: 0, persistence: .database) }
}

/// Cross-instance state propagation on PostgreSQL (`propagation URL`): two backends with connections of their own
/// (two instances, in one process), each under a kernel with no modules. Instance A writes a persisted key; the
/// benchmark times how long A's write takes to return (the compare-and-set round trip) and how long until an
/// observer on instance B has the value (the write, the trigger's NOTIFY, B reading the row, B's observer).
func runPropagationBenchmark(url: String, rounds: Int = 500) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let a = try await PostgresBackend.connect(url: url, logger: quiet)
    let b = try await PostgresBackend.connect(url: url, logger: quiet)
    func kernel(_ backend: PostgresBackend) async throws -> Kernel {
        var options = KernelOptions()
        options.externalStorage = backend.storage
        let kernel = Kernel(modules: [], host: HostEnvironment(version: "1.0.0"), options: options, logger: quiet)
        try await kernel.boot()
        return kernel
    }
    let writer = try await kernel(a)
    let observer = try await kernel(b)
    let start = writer.sharedState[.propagated]
    var seen = observer.sharedState.values(of: .propagated).makeAsyncIterator()
    while let value = await seen.next(), value != start {}
    var writes: [Duration] = []
    var arrivals: [Duration] = []
    for round in 1...(rounds + 50) {
        let began = ContinuousClock.now
        try await writer.sharedState.set(.propagated, to: start + round)
        let written = ContinuousClock.now
        while let value = await seen.next(), value != start + round {}
        guard round > 50 else { continue }
        writes.append(began.duration(to: written))
        arrivals.append(began.duration(to: .now))
    }
    func line(_ name: String, _ samples: [Duration]) {
        let sorted = samples.sorted().map { $0.nanoseconds / 1_000 }
        let at = { (q: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        print(
            row(
                [
                    name, format(at(0.5), places: 0), format(at(0.99), places: 0), format(sorted[0], places: 0),
                    format(sorted[sorted.count - 1], places: 0),
                ], widths: [44, 8, 8, 8, 8]))
    }
    print("\nCross-instance state on PostgreSQL, µs over \(rounds) writes (after 50 warm-ups)")
    print(row(["", "p50", "p99", "min", "max"], widths: [44, 8, 8, 8, 8]))
    line("write on A returns", writes)
    line("observer on B has the value", arrivals)
    await writer.shutdown()
    await observer.shutdown()
    await a.close()
    await b.close()
}
