import Foundation
import Logging
import Mosaic
import MosaicKernel
import MosaicPostgres
import Synchronization

extension StateKey where Value == Int {
    /// How many events one round's handler counted.
    static func handledCount(_ round: String) -> Self {
        StateKey("bench.handled.\(round)", initial: 0, persistence: .database)
    }
}

/// Handled events per second of a durable handler that counts each event in shared state: in its transaction, with
/// the delivery's completion (one commit per event), against the same count written apart, its completion recorded
/// with its batch's (a commit per event, and one per batch). Both drain the same backlog of `count` events, on the
/// embedded store and, with a URL, on PostgreSQL; rounds alternate the two, each on fresh storage.
func runTransactionalBenchmark(postgres url: String?, count: Int = 2_000, rounds: Int = 3) async throws {
    var stores: [(name: String, url: String?)] = [("embedded (SQLite)", nil)]
    if let url { stores.append(("PostgreSQL", url)) }
    for store in stores {
        var transactional: [Double] = []
        var apart: [Double] = []
        for round in 0..<rounds {
            for inTransaction in [true, false] {
                let rate = try await drainRate(
                    store.url, round: "\(round)-\(inTransaction ? "tx" : "apart")", count: count,
                    inTransaction: inTransaction)
                if inTransaction { transactional.append(rate) } else { apart.append(rate) }
            }
        }
        let ratios = zip(transactional, apart).map { $0 / $1 }.sorted()
        print(
            "\(store.name): transactional \(format(transactional.sorted()[rounds / 2])) events/s "
                + "(\(transactional.map { format($0) }.joined(separator: ", "))), write and completion apart "
                + "\(format(apart.sorted()[rounds / 2])) events/s (\(apart.map { format($0) }.joined(separator: ", "))); "
                + "ratio per round \(ratios.map { format($0) }.joined(separator: ", ")), median \(format(ratios[rounds / 2]))"
        )
    }
}

/// Events per second one handler drains a backlog of `count` with.
private func drainRate(_ url: String?, round: String, count: Int, inTransaction: Bool) async throws -> Double {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-bench-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var options = KernelOptions(storageTimeLimit: .seconds(30))
    options.durableEvents = DurableEventOptions(batchSize: 64)
    let backend: PostgresBackend? =
        if let url { try await PostgresBackend.connect(url: url, logger: quiet) } else { nil }
    if let backend { options.externalStorage = backend.storage } else { options.stateDirectory = directory }
    let key = StateKey<Int>.handledCount(round)
    let shop = Mutex<ActivationContext?>(nil)
    var catalog = ModuleCatalog()
    catalog.add(
        ModuleFactory(manifest: Manifest(id: "bench.shop", version: "1.0.0"), register: { $0.reads(key) }) {
            BenchModule { context in shop.withLock { $0 = context } }
        })
    catalog.add(
        ModuleFactory(
            manifest: Manifest(id: "bench.counter", version: "1.0.0", entitlements: ["count"]),
            register: { $0.writes(key) }
        ) {
            BenchModule { context in
                if inTransaction {
                    try await context.events.handle(BenchReceipt.self, as: "count-\(round)") { _, transaction in
                        transaction.update(key) { $0 += 1 }
                    }
                } else {
                    try await context.events.handle(BenchReceipt.self, as: "count-\(round)") { _ in
                        try await context.state.update(key) { $0 += 1 }
                    }
                }
            }
        })
    let kernel = Kernel(
        catalog: catalog, host: HostEnvironment(version: "1.0.0"), entitlements: .granted(["count"]),
        options: options, logger: quiet)
    try await kernel.boot()
    guard let context = shop.withLock({ $0 }) else { throw BenchmarkError("the shop module did not activate") }
    // The handler is recorded; revoked, its deliveries wait while the backlog is published.
    try await kernel.revoke("count")
    for start in stride(from: 0, to: count, by: 100) {
        try await context.events.publish(
            contentsOf: (start..<min(count, start + 100)).map { BenchReceipt(order: $0, sentAt: 0) })
    }
    var values = context.state.values(of: key).makeAsyncIterator()
    let started = ContinuousClock.now
    try await kernel.grant("count")
    while let value = await values.next(), value < count {}
    let elapsed = started.duration(to: .now)
    await kernel.shutdown()
    await backend?.close()
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Double(count) / seconds
}
