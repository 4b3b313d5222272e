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
