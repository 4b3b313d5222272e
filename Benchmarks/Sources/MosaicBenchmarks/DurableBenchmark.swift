import Foundation
import Logging
import Mosaic
import MosaicKernel
import MosaicPostgres
import NIOPosix
import PostgresNIO
import Synchronization

struct BenchReceipt: DurableEvent {
    static let durableName = "bench.receipt"
    let order: Int
    /// When it was published, on this process's clock (latency is measured within one process).
    let sentAt: UInt64
}

/// A module that runs `onActivate` with its context.
struct BenchModule: Module {
    static let manifest = Manifest(id: "bench.module", version: "1.0.0")
    var onActivate: @Sendable (ActivationContext) async throws -> Void = { _ in }
    init() {}
    init(_ onActivate: @escaping @Sendable (ActivationContext) async throws -> Void) { self.onActivate = onActivate }
    func activate(_ context: ActivationContext) async throws { try await onActivate(context) }
}

/// One instance: its own backend and kernel; a shop module that publishes, and optionally a mail module (needing
/// the `mail` entitlement) whose durable handler `name` runs `handle`.
struct DurableBenchInstance {
    let backend: PostgresBackend
    let kernel: Kernel
    let shop: ActivationContext

    static func boot(
        _ url: String, handler name: String? = nil,
        _ handle: @escaping @Sendable (DurableEnvelope<BenchReceipt>) async throws -> Void = { _ in }
    ) async throws -> DurableBenchInstance {
        var quiet = Logger(label: "bench")
        quiet.logLevel = .critical
        let backend = try await PostgresBackend.connect(url: url, logger: quiet)
        var options = KernelOptions()
        options.externalStorage = backend.storage
        // A claim left by a killed instance lapses after 3 s (the crash demonstration waits that long once).
        options.durableEvents = DurableEventOptions(
            handlerTimeLimit: .seconds(1), claimLease: .seconds(3), batchSize: 64)
        let shop = Mutex<ActivationContext?>(nil)
        var catalog = ModuleCatalog()
        catalog.add(
            ModuleFactory(manifest: Manifest(id: "bench.shop", version: "1.0.0")) {
                BenchModule { context in shop.withLock { $0 = context } }
            })
        if let name {
            catalog.add(
                ModuleFactory(manifest: Manifest(id: "bench.mail", version: "1.0.0", entitlements: ["mail"])) {
                    BenchModule { context in try await context.events.handle(BenchReceipt.self, as: name, handle) }
                })
        }
        let kernel = Kernel(
            catalog: catalog, host: HostEnvironment(version: "1.0.0"), entitlements: .granted(["mail"]),
            options: options, logger: quiet)
        try await kernel.boot()
        guard let context = shop.withLock({ $0 }) else { throw BenchmarkError("the shop module did not activate") }
        return DurableBenchInstance(backend: backend, kernel: kernel, shop: context)
    }

    func stop() async {
        await kernel.shutdown()
        await backend.close()
    }
}

/// Counts handled events and reports when a target is reached.
final class Arrivals: Sendable {
    private let state = Mutex<(count: Int, target: Int, waiter: CheckedContinuation<Void, Never>?)>((0, .max, nil))
    private let latencies = Mutex<[UInt64]>([])

    func arrived(_ receipt: BenchReceipt) {
        latencies.withLock { $0.append(DispatchTime.now().uptimeNanoseconds - receipt.sentAt) }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            guard state.count >= state.target else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits until `count` events arrived in all.
    func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.count >= count { return true }
                state.target = count
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func takeLatencies() -> [UInt64] {
        latencies.withLock { all in
            defer { all = [] }
            return all
        }
    }
}

/// Latencies recorded by many tasks, in nanoseconds.
final class Latencies: Sendable {
    let values = Mutex<[UInt64]>([])
    func record(_ nanoseconds: UInt64) { values.withLock { $0.append(nanoseconds) } }
}

/// Durable events on PostgreSQL (`durable URL`): publishing into the outbox from one instance, one publisher at a
/// time (a commit per event, the floor) and 16 and 64 publishers at once (publishes share commits) and in batches of
/// 100 (`publish(contentsOf:)`); draining the waiting deliveries with one consumer instance and with two (the events
/// are published while the handler's module is revoked on every instance, then it is granted, and the clock runs
/// until the last is handled); and the outbox latency, publish to handler: one event at a time, and at half the
/// highest rate the outbox sustained (the lower of the highest publishing rate and one consumer's drain rate), and,
/// given `fixedRate`, at that many events/s; each paced run with a floor's commits in the same seconds.
func runDurableBenchmark(url: String, events: Int = 10_000, rounds: Int = 500, fixedRate: Int? = nil) async throws {
    print("\nDurable events on PostgreSQL (each consumer is an instance with its own connections)")
    print(row(["", "events", "events/s", "seconds"], widths: [44, 8, 10, 10]))
    var highest = 0.0
    var drainedAlone = 0.0
    for consumers in [1, 2] {
        let arrivals = Arrivals()
        let name = "drain-\(consumers)"
        var instances: [DurableBenchInstance] = []
        for _ in 0..<consumers {
            instances.append(try await DurableBenchInstance.boot(url, handler: name) { arrivals.arrived($0.event) })
        }
        try await instances[0].kernel.revoke("mail")
        // Every instance applies the revoke (through the stored policy) before the events go out.
        for instance in instances {
            while await instance.kernel.state(of: "bench.mail") == .active {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        let shop = instances[0].shop
        var published = 0
        let modes: [(String, Int, Int, Int)] =
            consumers == 1
            ? [
                ("publish, 1 publisher", events / 5, 1, 1), ("publish, 16 publishers", events, 16, 1),
                ("publish, 64 publishers", events, 64, 1), ("publish, batches of 100", events, 1, 100),
            ]
            : [("publish, batches of 100", events, 1, 100)]
        for (title, count, publishers, batch) in modes {
            let took = try await publish(count, from: shop, publishers: publishers, batch: batch, first: published)
            published += count
            highest = max(highest, Double(count) / inSeconds(took))
            if consumers == 1 {
                print(row([title, "\(count)", rate(count, took), seconds(took)], widths: [44, 8, 10, 10]))
            }
        }
        let draining = ContinuousClock.now
        try await instances[0].kernel.grant("mail")
        await arrivals.wait(for: published)
        let drained = draining.duration(to: .now)
        if consumers == 1 { drainedAlone = Double(published) / inSeconds(drained) }
        let title = "drain, \(consumers) consumer\(consumers == 1 ? "" : "s")"
        print(row([title, "\(published)", rate(published, drained), seconds(drained)], widths: [44, 8, 10, 10]))
        // Uninstalled, the handler is recorded for no later event (so it does not slow the next runs' publishing).
        for instance in instances { try await instance.kernel.uninstall("bench.mail") }
        for instance in instances { await instance.stop() }
    }

    let arrivals = Arrivals()
    let consumer = try await DurableBenchInstance.boot(url, handler: "latency") { arrivals.arrived($0.event) }
    let publisher = try await DurableBenchInstance.boot(url)
    for round in 1...(rounds + 50) {
        try await publisher.shop.events.publish(
            BenchReceipt(order: round, sentAt: DispatchTime.now().uptimeNanoseconds))
        await arrivals.wait(for: round)
        if round == 50 { _ = arrivals.takeLatencies() }
    }
    print("\nOutbox latency, publish on one instance to the handler on another, µs")
    print(row(["", "events", "p50", "p99", "min", "max"], widths: [44, 8, 8, 8, 8, 8]))
    printLatencies("one at a time", arrivals.takeLatencies())
    // Half the highest rate the outbox sustains (publishing and one consumer draining), paced in ticks of 10 ms,
    // each tick's events published at once, for 3 s.
    let perTick = max(1, Int(min(highest, drainedAlone) / 2 / 100))
    let ticks = 300
    let floor = try await CommitFloor(url: url)
    var first = rounds + 50
    let half = try await publishPaced(
        perSecond: perTick * 100, ticks: ticks, after: first, from: publisher, to: arrivals, floor: floor)
    first += ticks * perTick
    printLatencies("at \(perTick * 100) events/s (half the sustained)", half.handled)
    printLatencies("  of which publish returned", half.returned)
    printLatencies("  floor: a one-row synced commit every 10 ms", half.floor)
    if let fixedRate {
        // The same at a rate every peer of Benchmarks/peers.sh takes, so that their rows compare.
        let fixed = try await publishPaced(
            perSecond: fixedRate, ticks: ticks, after: first, from: publisher, to: arrivals, floor: floor)
        print("\nOutbox latency at a fixed offered rate, publish to handler, µs")
        print(row(["", "events", "p50", "p99", "min", "max"], widths: [44, 8, 8, 8, 8, 8]))
        printLatencies("at \(fixedRate) events/s (fixed)", fixed.handled)
        printLatencies("  of which publish returned (fixed)", fixed.returned)
        printLatencies("  floor (fixed): one-row commit every 10 ms", fixed.floor)
    }
    await floor.close()
    try await consumer.kernel.uninstall("bench.mail")
    await consumer.stop()
    await publisher.stop()
}

/// Publishes `perSecond` events/s from `publisher`, numbered from `after + 1`, in ticks of 10 ms for `ticks` ticks
/// (each tick's events at once), while `floor` commits one row a tick in the same seconds; waits until `arrivals`
/// counts them all. Each event's time from publish to handler, until its publish returned, and the floor's commits,
/// in nanoseconds.
private func publishPaced(
    perSecond: Int, ticks: Int, after: Int, from publisher: DurableBenchInstance, to arrivals: Arrivals,
    floor: CommitFloor
) async throws -> (handled: [UInt64], returned: [UInt64], floor: [UInt64]) {
    let clock = ContinuousClock()
    let start = clock.now
    let returned = Latencies()
    // The floor runs through the same seconds, so that whatever holds up the server's commits holds up both.
    let floorCommits = Task { try await floor.commit(ticks: ticks, from: start, on: clock) }
    var order = after
    for tick in 0..<ticks {
        for _ in 0..<((tick + 1) * perSecond / 100 - tick * perSecond / 100) {
            order += 1
            let receipt = order
            Task {
                let sentAt = DispatchTime.now().uptimeNanoseconds
                try await publisher.shop.events.publish(BenchReceipt(order: receipt, sentAt: sentAt))
                returned.record(DispatchTime.now().uptimeNanoseconds - sentAt)
            }
        }
        try await clock.sleep(until: start.advanced(by: .milliseconds(10 * (tick + 1))))
    }
    await arrivals.wait(for: order)
    let floorTook = try await floorCommits.value
    return (arrivals.takeLatencies(), returned.values.withLock { $0 }, floorTook)
}

/// The floor of an event's latency: a commit of one row, on a connection of its own, that waits for the server's
/// log to reach the disk as a durable publish's commit does. Run in the same seconds as the events, it shows the
/// stalls of the disk's syncs (tens of milliseconds, now and then, on this machine's disk) that no publish avoids.
struct CommitFloor {
    let connection: PostgresConnection
    let logger = Logger(label: "bench.floor")

    init(url: String) async throws {
        connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: try postgresConfiguration(url), id: 2,
            logger: logger)
        _ = try await connection.query("CREATE TABLE IF NOT EXISTS bench_commit_floor (tick integer)", logger: logger)
    }

    /// Commits one row per tick of 10 ms from `start`; each commit's time, in nanoseconds.
    func commit(ticks: Int, from start: ContinuousClock.Instant, on clock: ContinuousClock) async throws -> [UInt64] {
        var took: [UInt64] = []
        for tick in 0..<ticks {
            let sent = DispatchTime.now().uptimeNanoseconds
            _ = try await connection.query("INSERT INTO bench_commit_floor VALUES (\(tick))", logger: logger)
            took.append(DispatchTime.now().uptimeNanoseconds - sent)
            try await clock.sleep(until: start.advanced(by: .milliseconds(10 * (tick + 1))))
        }
        return took
    }

    func close() async { try? await connection.close() }
}

/// Publishes `count` events from `shop`, numbered from `first + 1`: `publishers` tasks at once, each publishing
/// in batches of `batch`; how long it took.
private func publish(
    _ count: Int, from shop: ActivationContext, publishers: Int, batch: Int, first: Int
) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for publisher in 0..<publishers {
            group.addTask {
                let mine = Array(stride(from: first + publisher + 1, through: first + count, by: publishers))
                for chunk in stride(from: 0, to: mine.count, by: batch) {
                    let receipts = mine[chunk..<min(chunk + batch, mine.count)].map {
                        BenchReceipt(order: $0, sentAt: 0)
                    }
                    if receipts.count == 1 {
                        try await shop.events.publish(receipts[0])
                    } else {
                        try await shop.events.publish(contentsOf: receipts)
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    return start.duration(to: clock.now)
}

private func printLatencies(_ title: String, _ nanoseconds: [UInt64]) {
    let sorted = nanoseconds.sorted().map { Int($0 / 1_000) }
    guard !sorted.isEmpty else { return }
    let at = { (q: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    print(
        row(
            [title, "\(sorted.count)", "\(at(0.5))", "\(at(0.99))", "\(sorted[0])", "\(sorted[sorted.count - 1])"],
            widths: [44, 8, 8, 8, 8, 8]))
}

private func rate(_ count: Int, _ duration: Duration) -> String {
    let perSecond: Double = Double(count) / inSeconds(duration)
    return format(perSecond, places: 0)
}

private func seconds(_ duration: Duration) -> String {
    String(format: "%.2f", inSeconds(duration))
}

private func inSeconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) + Double(attoseconds) / 1e18
}

// The crash demonstration's two roles (durable-crash.py runs them as separate processes and kills them).

/// `durable-publish URL COUNT`: publishes COUNT events and prints `committed N` after each one is in the outbox.
func runDurablePublisher(url: String, count: Int) async throws {
    let instance = try await DurableBenchInstance.boot(url)
    for order in 1...count {
        try await instance.shop.events.publish(BenchReceipt(order: order, sentAt: 0))
        print("committed \(order)")
        fflush(nil)
    }
    await instance.stop()
}

/// `durable-consume URL`: handles every event until killed. Its effect is made idempotent by the envelope id: a
/// row in `demo_effect` per event (a repeat changes nothing); every call is also logged in `demo_call`, so that
/// duplicates can be counted.
func runDurableConsumer(url: String) async throws {
    let effects = try await PostgresConnection.connect(
        on: MultiThreadedEventLoopGroup.singleton.next(), configuration: try postgresConfiguration(url), id: 1,
        logger: Logger(label: "bench.effects"))
    let instance = try await DurableBenchInstance.boot(url, handler: "crash-demo") { envelope in
        _ = try await effects.query(
            """
            WITH call AS (INSERT INTO demo_call (event_id, attempt) VALUES (\(envelope.id), \(envelope.attempt)))
            INSERT INTO demo_effect (event_id) VALUES (\(envelope.id)) ON CONFLICT DO NOTHING
            """, logger: Logger(label: "bench.effects"))
    }
    print("consuming")
    fflush(nil)
    // Runs until killed.
    while true { try await Task.sleep(for: .seconds(3_600)) }
    _ = instance
}

/// The connection settings of a `postgres://user@host:port/db` URL (the demo's own connection for its effects).
private func postgresConfiguration(_ url: String) throws -> PostgresConnection.Configuration {
    guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
        throw BenchmarkError("not a postgres:// URL with a user and a host: \(url)")
    }
    return PostgresConnection.Configuration(
        host: host, port: parts.port ?? 5432, username: user, password: parts.password,
        database: String(parts.path.dropFirst()), tls: .disable)
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
