import Foundation
import Logging
import Mosaic
import MosaicKernel

extension StateKey where Value == Int {
    static var benchmarkCounter: Self { StateKey("bench.counter", initial: 0) }
}

/// Write-to-observer latency with one observer, and fan-out of one write to 1,000 observers, then the same fan-out
/// without Mosaic. `rounds` other than 50 is for profiling (`profile-state ROUNDS`): 1,000 observers only, and
/// nothing printed.
func runStateBenchmark(rounds: Int = 50) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let printing = rounds == 50
    if printing { print("\nShared state (release build), median of 50 writes") }
    for observers in printing ? [1, 1_000] : [1_000] {
        let kernel = Kernel(catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), logger: quiet)
        try await kernel.boot()
        let state = kernel.sharedState
        let timings = try await fanOut(
            observers: observers, rounds: rounds, subscribe: { state.values(of: .benchmarkCounter) },
            accept: { $0 > 0 }, trigger: { round in try await state.set(.benchmarkCounter, to: round) })
        await kernel.shutdown()
        guard printing else { continue }
        let nanoseconds = Int((timings.delivered * 1_000 / Double(observers)).rounded())
        let perDelivery = observers == 1 ? "" : ", \(nanoseconds) ns per delivery"
        print(
            "  \(observers) observer\(observers == 1 ? "" : "s"): write returns in \(format(timings.returns, places: 1)) "
                + "µs, every observer has the value after \(format(timings.delivered, places: 1)) µs "
                + "(p90 \(format(timings.deliveredP90, places: 1)))\(perDelivery)")
    }
    if printing { await runFanOutFloors() }
}

/// Writes per second of persisted keys: one writer (each write waits for its commit, the floor), and 16 writers at
/// once on 16 distinct keys (writes of different keys do not wait for each other), `writes` in all; in SQLite under
/// a temporary state directory, or in the external storage given.
func runStateWriteBenchmark(
    title: String, externalStorage: ExternalStorage? = nil, writes: Int = 2_000
) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    var options = KernelOptions(stateDirectory: directory.path)
    options.externalStorage = externalStorage
    let kernel = Kernel(
        catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), options: options, logger: quiet)
    try await kernel.boot()
    let state = kernel.sharedState
    print("\nState writes of persisted keys, \(title), \(writes) writes")
    print(row(["", "writes/s", "seconds"], widths: [44, 10, 10]))
    for writers in [1, 16] {
        let keys = (0..<writers).map { StateKey("bench.written-\(writers)-\($0)", initial: 0, persistence: .database) }
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for key in keys {
                group.addTask { for value in 1...(writes / writers) { try await state.set(key, to: value) } }
            }
            try await group.waitForAll()
        }
        let took = start.duration(to: clock.now)
        let (seconds, attoseconds) = took.components
        let elapsed = Double(seconds) + Double(attoseconds) / 1e18
        print(
            row(
                [
                    "\(writers) writer\(writers == 1 ? "" : "s") on distinct keys",
                    format(Double(writes) / elapsed, places: 0),
                    String(format: "%.2f", elapsed),
                ], widths: [44, 10, 10]))
    }
    await kernel.shutdown()
}
