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
    print("\nShared state (release build), median of 50 writes")
    for observers in [1, 1_000] {
        let kernel = Kernel(catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), logger: quiet)
        try await kernel.boot()
        let state = kernel.sharedState
        let timings = try await fanOut(
            observers: observers, subscribe: { state.values(of: .benchmarkCounter) }, accept: { $0 > 0 },
            trigger: { round in try state.set(.benchmarkCounter, to: round) })
        await kernel.shutdown()
        print(
            "  \(observers) observer\(observers == 1 ? "" : "s"): write returns in \(format(timings.returns, places: 1)) µs, "
                + "every observer has the value after \(format(timings.delivered, places: 1)) µs "
                + "(p90 \(format(timings.deliveredP90, places: 1)))")
    }
}
