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
        options.sharedStorage = backend.storage
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

/// Durable events on PostgreSQL (`durable URL`): publishing 10,000 into the outbox from one instance; draining
/// 10,000 waiting deliveries with one consumer instance and with two (the events are published while the handler's
/// module is revoked on every instance, then it is granted, and the clock runs until the last is handled); and
/// the outbox latency, publish to handler, one event at a time.
func runDurableBenchmark(url: String, events: Int = 10_000, rounds: Int = 500) async throws {
    print("\nDurable events on PostgreSQL (\(events) events; each consumer is an instance with its own connections)")
    print(row(["", "events/s", "seconds"], widths: [44, 10, 10]))
    for consumers in [1, 2] {
        let arrivals = Arrivals()
        let name = "drain-\(consumers)"
        var instances: [DurableBenchInstance] = []
        for _ in 0..<consumers {
            instances.append(try await DurableBenchInstance.boot(url, handler: name) { arrivals.arrived($0.event) })
        }
        try await instances[0].kernel.revoke("mail")
        // Every instance applies the revoke (through the shared policy) before the events go out.
        for instance in instances {
            while await instance.kernel.state(of: "bench.mail") == .active {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        let publishing = ContinuousClock.now
        for order in 1...events {
            try await instances[0].shop.events.publish(BenchReceipt(order: order, sentAt: 0))
        }
        let published = publishing.duration(to: .now)
        if consumers == 1 {
            print(
                row(
                    ["publish into the outbox (one instance)", rate(events, published), seconds(published)],
                    widths: [44, 10, 10]))
        }
        let draining = ContinuousClock.now
        try await instances[0].kernel.grant("mail")
        await arrivals.wait(for: events)
        let drained = draining.duration(to: .now)
        print(
            row(
                ["drain, \(consumers) consumer\(consumers == 1 ? "" : "s")", rate(events, drained), seconds(drained)],
                widths: [44, 10, 10]))
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
    let sorted = arrivals.takeLatencies().sorted().map { Int($0 / 1_000) }
    let at = { (q: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    print("\nOutbox latency, publish on one instance to the handler on another, µs over \(rounds) events")
    print(row(["", "p50", "p99", "min", "max"], widths: [44, 8, 8, 8, 8]))
    print(
        row(
            ["publish → handler", "\(at(0.5))", "\(at(0.99))", "\(sorted[0])", "\(sorted[sorted.count - 1])"],
            widths: [44, 8, 8, 8, 8]))
    try await consumer.kernel.uninstall("bench.mail")
    await consumer.stop()
    await publisher.stop()
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
