import Logging
import Mosaic
import MosaicKernel

/// The 100 points of the benchmark.
let benchmarkPoints = (0..<100).map { ExtensionPoint<Panel>(id: "bench.point.p\($0)") }

/// 1,000 modules with 10 contributions each (10,000 in all), spread over 100 points: module m contributes to
/// points m % 100 … so that each point gets 100. Module m needs entitlement "e\(m)", so one can be revoked.
func contributionCatalog() -> ModuleCatalog {
    var catalog = ModuleCatalog()
    for index in 0..<1_000 {
        let manifest = Manifest(
            id: ModuleID("bench.contributor.m\(index)"), version: "1.0.0", entitlements: [Entitlement("e\(index)")])
        catalog.add(
            ModuleFactory(
                manifest: manifest,
                register: { module in
                    for item in 0..<10 {
                        module.contribute(
                            to: benchmarkPoints[(index + item * 10) % 100], id: "m\(index).c\(item)",
                            priority: (index * 7 + item) % 13, title: "m\(index).c\(item)"
                        ) { Panel(.text("\(index)")) }
                    }
                }
            ) { NoOpModule() })
    }
    return catalog
}

/// Reading one point of 100 contributions, and the time from revoking one module's entitlement (or granting it
/// back) until an observer of one of its points holds the new list.
func runContributionBenchmark(rounds: Int = 40, reads: Int = 1_000_000) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(
        catalog: contributionCatalog(), host: HostEnvironment(version: "1.0.0"),
        entitlements: .granted(Set((0..<1_000).map { Entitlement("e\($0)") })),
        extensionPoints: benchmarkPoints.map(\.erased), logger: quiet)
    try await kernel.boot()
    let point = benchmarkPoints[0]
    precondition(kernel.contributions(for: point).count == 100)
    print("\nContributions: 10,000 over 100 points, 1,000 modules (release build)\n")
    let read = nanoseconds(count: reads) { consume(kernel.contributions(for: point)) }
    print("  read one point (100 contributions, ordered):      \(format(read, places: 1)) ns")

    var iterator = kernel.updates(of: point).makeAsyncIterator()
    _ = await iterator.next()
    var latencies: [Double] = []
    for round in 0..<rounds {
        let expected = round.isMultiple(of: 2) ? 99 : 100
        let start = ContinuousClock.now
        if round.isMultiple(of: 2) { try await kernel.revoke("e0") } else { try await kernel.grant("e0") }
        while let list = await iterator.next(), list.count != expected {}
        latencies.append(start.duration(to: .now).nanoseconds / 1_000)
    }
    let sorted = latencies.sorted()
    print(
        "  revoke or grant one module → observer has the list: median \(format(sorted[rounds / 2], places: 1)) µs, "
            + "p90 \(format(sorted[rounds * 9 / 10], places: 1)) µs (includes deactivating or activating the module)")
}
