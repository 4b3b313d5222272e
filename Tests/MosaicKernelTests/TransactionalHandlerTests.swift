import Foundation
import GRDB
import MetricsTestKit
import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

extension StateKey where Value == Int {
    /// How many `OrderPlaced` events the counting handler counted: persisted, so that it commits with the outbox.
    static var ordersCounted: Self { StateKey("com.test.orders-counted", initial: 0, persistence: .database) }
    /// Stock on disk, for transactions of two persisted keys.
    static var stockOnDisk: Self { StateKey("com.test.stock", initial: 10, persistence: .database) }
}

/// Where a test's kernels keep their state and outbox.
enum Store: String, CustomTestStringConvertible, CaseIterable, Sendable {
    case memory, embedded
    var testDescription: String { rawValue }
}

/// A module that writes the count, handing its context to `contexts`.
func countingModule(_ id: ModuleID, entitlements: Set<Entitlement> = [], contexts: Contexts) -> ModuleFactory {
    serviceModule(
        id, entitlements: entitlements, onActivate: { contexts.keep($0) },
        register: { module in
            module.writes(.ordersCounted)
            module.writes(.stockOnDisk)
        })
}

@Suite(.timeLimit(.minutes(1))) struct TransactionalHandlerTests {
    let contexts = Contexts()
    let clock = ManualClock()
    let metrics = TestMetrics()

    func boot(_ store: Store, in directory: String, handlerEntitlements: Set<Entitlement> = []) async throws -> Kernel {
        var options = KernelOptions(stateDirectory: store == .embedded ? directory : nil, clock: clock)
        options.metricsFactory = metrics
        options.durableEvents = DurableEventOptions(
            firstRetryDelay: .seconds(1), maximumRetryDelay: .seconds(1), handlerTimeLimit: .seconds(5),
            claimLease: .seconds(15), pollInterval: .seconds(1))
        let kernel = makeKernel(
            [
                eventModule("com.app.shop", contexts: contexts),
                countingModule("com.app.ledger", entitlements: handlerEntitlements, contexts: contexts),
            ], entitlements: handlerEntitlements, options: options)
        try await kernel.boot()
        return kernel
    }

    /// Registers the handler that counts each order in its transaction, recording each attempt in `attempts`.
    func count(into attempts: Handled, holding gate: Gate? = nil) async throws {
        try await #require(contexts["com.app.ledger"]).events.handle(OrderPlaced.self, as: "count") {
            envelope, transaction in
            attempts.record(envelope)
            if envelope.attempt == 1, let gate {
                // Ignores its cancellation, as slow handler code may: it ends only when the gate opens.
                await withTaskCancellationHandler {
                    await gate.wait()
                } onCancel: {
                }
            }
            transaction.update(.ordersCounted) { $0 += 1 }
        }
    }

    /// Moves the clock on a second at a time until `done` holds, each time once the handlers' work has settled, so
    /// that no time limit of work in flight passes because the machine was slow.
    func advance(_ kernel: Kernel, until done: () async throws -> Bool) async rethrows {
        while try await !done() {
            await kernel.durableWorkSettled()
            clock.advance(by: .seconds(1))
            await Task.yield()
        }
    }

    @Test(
        "each event's transaction commits with its delivery: 40 orders counted exactly 40 times",
        arguments: Store.allCases)
    func countedOnce(store: Store) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kernel = try await boot(store, in: directory)
        let attempts = Handled()
        try await count(into: attempts)
        let shop = try #require(contexts["com.app.shop"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for order in 1...40 { group.addTask { try await shop.events.publish(OrderPlaced(order: order)) } }
            try await group.waitForAll()
        }
        await attempts.waitFor(40)
        await kernel.durableWorkSettled()
        #expect(shop.state[.ordersCounted] == 40)
        #expect(Set(attempts.envelopes.map(\.event.order)) == Set(1...40))
        let completed = [("subscriber", "com.app.ledger/count"), ("outcome", "completed")]
        #expect(metrics.counterTotal(label: MetricName.durableDeliveries, dimensions: completed) == 40)
        await kernel.shutdown()
        guard store == .embedded else { return }
        // Done deliveries and their events are gone from the database; the count is there.
        let rows = try await offThePool {
            try DatabaseQueue(path: directory + "/state.sqlite").read { db in
                try ["mosaic_delivery", "mosaic_event"].map { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") }
            }
        }
        #expect(rows == [0, 0])
        let reopened = try await boot(store, in: directory)
        await reopened.sharedState.load(.ordersCounted)
        #expect(reopened.sharedState[.ordersCounted] == 40)
        await reopened.shutdown()
    }

    @Test(
        "an attempt that outlived its time limit is retried, and its late commit stores nothing: counted once",
        arguments: Store.allCases)
    func lateAttemptStoresNothing(store: Store) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kernel = try await boot(store, in: directory)
        let attempts = Handled()
        let gate = Gate()
        try await count(into: attempts, holding: gate)
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 1))
        await attempts.waitFor(1)
        // The first attempt hangs: its time limit passes (the watch's timer, set when the attempt started), the
        // delivery is retried and the second attempt commits the count.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(5))
        clock.advance(by: .seconds(5))
        await advance(kernel) { attempts.envelopes.count >= 2 }
        await kernel.durableWorkSettled()
        #expect(attempts.envelopes.map(\.attempt) == [1, 2])
        #expect(kernel.sharedState[.ordersCounted] == 1)
        // The first attempt ends now, late: its commit is refused, and the late end reported.
        gate.open()
        let late = [("subscriber", "com.app.ledger/count"), ("outcome", "late")]
        while metrics.counterTotal(label: MetricName.durableDeliveries, dimensions: late) == 0 { await Task.yield() }
        #expect(kernel.sharedState[.ordersCounted] == 1, "the late attempt's count was not stored")
        #expect(try await kernel.undeliveredEvents().isEmpty)
        await kernel.shutdown()
    }

    @Test(
        "a commit whose claim ran out and was claimed again rolls back and is reported stale; the new claim's commits",
        arguments: Store.allCases)
    func staleClaimRollsBack(store: Store) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kernel = try await boot(store, in: directory)
        let ledger = try #require(contexts["com.app.ledger"])
        // The handler is recorded (so the publish makes a delivery for it), but claims are made by hand below.
        let outbox = await kernel.eventHub.outbox.store
        let hub = await kernel.stateHub
        try await outbox.subscribe("com.app.ledger/by-hand", module: "com.app.ledger", to: OrderPlaced.durableName)
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 1))
        let first = try #require(try await outbox.claim("com.app.ledger/by-hand", limit: 1, lease: .seconds(15)).first)
        clock.advance(by: .seconds(16))
        let second = try #require(try await outbox.claim("com.app.ledger/by-hand", limit: 1, lease: .seconds(15)).first)
        #expect(second.id == first.id && second.attempt == 2 && second.claim != first.claim)
        var count = StateTransaction()
        count.update(.ordersCounted) { $0 += 1 }
        let stale = await #expect(throws: StaleDelivery.self) {
            try await hub.commit(
                count, as: "com.app.ledger", completing: DeliveryCompletion(delivery: first.id, claim: first.claim))
        }
        #expect(stale != nil)
        #expect(ledger.state[.ordersCounted] == 0, "nothing of the stale attempt was stored")
        try await hub.commit(
            count, as: "com.app.ledger", completing: DeliveryCompletion(delivery: second.id, claim: second.claim))
        #expect(ledger.state[.ordersCounted] == 1)
        await #expect(throws: StaleDelivery.self, "a delivery completes once") {
            try await hub.commit(
                count, as: "com.app.ledger", completing: DeliveryCompletion(delivery: second.id, claim: second.claim))
        }
        #expect(ledger.state[.ordersCounted] == 1)
        await kernel.shutdown()
    }

    @Test(
        "a batch's transactions commit together; one whose change throws is retried alone and the others commit",
        arguments: Store.allCases)
    func batchWithAFailingChange(store: Store) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kernel = try await boot(store, in: directory, handlerEntitlements: ["ledger"])
        let attempts = Handled()
        try await #require(contexts["com.app.ledger"]).events.handle(OrderPlaced.self, as: "count") {
            envelope, transaction in
            attempts.record(envelope)
            let failing = envelope.event.order == 3 && envelope.attempt == 1
            transaction.update(.ordersCounted) { count in
                if failing { throw MailError.serverDown }
                count += 1
            }
        }
        // Revoked while they are published, the five are claimed as one batch once it is granted back.
        try await kernel.revoke("ledger")
        for order in 1...5 { try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: order)) }
        try await kernel.grant("ledger")
        try await #require(contexts["com.app.ledger"]).events.handle(OrderPlaced.self, as: "count") {
            envelope, transaction in
            attempts.record(envelope)
            let failing = envelope.event.order == 3 && envelope.attempt == 1
            transaction.update(.ordersCounted) { count in
                if failing { throw MailError.serverDown }
                count += 1
            }
        }
        await attempts.waitFor(5)
        await kernel.durableWorkSettled()
        #expect(kernel.sharedState[.ordersCounted] == 4, "the others committed")
        await advance(kernel) { attempts.envelopes.count >= 6 }
        await kernel.durableWorkSettled()
        #expect(kernel.sharedState[.ordersCounted] == 5)
        #expect(attempts.envelopes.filter { $0.event.order == 3 }.map(\.attempt) == [1, 2])
        await kernel.shutdown()
    }

    @Test("on the embedded store, deliveries waiting for a handler outlive the kernel and are handled by the next")
    func deliveriesOutliveTheKernel() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await boot(.embedded, in: directory, handlerEntitlements: ["ledger"])
        try await count(into: Handled())
        try await first.revoke("ledger")
        let shop = try #require(contexts["com.app.shop"])
        for order in 1...5 { try await shop.events.publish(OrderPlaced(order: order)) }
        await first.shutdown()

        let second = try await boot(.embedded, in: directory, handlerEntitlements: ["ledger"])
        let attempts = Handled()
        try await count(into: attempts)
        await attempts.waitFor(5)
        await second.durableWorkSettled()
        #expect(attempts.envelopes.map(\.event.order).sorted() == [1, 2, 3, 4, 5])
        #expect(second.sharedState[.ordersCounted] == 5)
        await second.shutdown()
    }

    @Test(
        "a handler renamed, or whose module left the catalog, is listed as stranded, and its deliveries abandoned after the retention",
        arguments: [true, false])
    func strandedHandler(moduleRemoved: Bool) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await boot(.embedded, in: directory, handlerEntitlements: ["ledger"])
        try await count(into: Handled())
        try await first.revoke("ledger")
        for order in 1...3 { try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: order)) }
        await first.shutdown()

        // The next release: the ledger module is gone, or registers its handler under a new name.
        var options = KernelOptions(stateDirectory: directory, clock: clock)
        options.durableEvents.strandedRetention = .seconds(10)
        let next = makeKernel(
            [eventModule("com.app.shop", contexts: contexts)]
                + (moduleRemoved ? [] : [countingModule("com.app.ledger", contexts: contexts)]),
            options: options)
        try await next.boot()
        if !moduleRemoved {
            try await #require(contexts["com.app.ledger"]).events.handle(OrderPlaced.self, as: "count-orders") {
                _, _ in
            }
        }
        let stranded = try await next.strandedHandlers()
        #expect(stranded.map(\.subscriber) == ["com.app.ledger/count"])
        #expect(stranded.first?.reason == (moduleRemoved ? .moduleNotInstalled : .notRegistered))
        #expect(stranded.first?.pending == 3)
        #expect(try await next.undeliveredEvents().isEmpty, "listed, not abandoned yet")
        // The sweep, once a retention: nothing has run the handler for longer by then.
        await next.durableWorkSettled()
        await clock.sleepers(reaching: 1, dueWithin: .seconds(10))
        clock.advance(by: .seconds(10))
        while try await next.undeliveredEvents().count < 3 { await Task.yield() }
        let abandoned = try await next.undeliveredEvents()
        #expect(abandoned.allSatisfy { $0.reason == .abandoned && $0.subscriber == "com.app.ledger/count" })
        #expect(abandoned.first?.lastError.contains("strandedRetention") == true, "\(abandoned)")
        #expect(try await next.strandedHandlers().isEmpty)
        await next.shutdown()
    }

    @Test("a transaction whose commit outlives its time limit leaves memory as on disk once the commit lands")
    func lateCommitKeepsMemoryAndDiskTogether() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = KernelOptions(
            stateDirectory: directory, stateDatabaseBusyTimeLimit: .seconds(30), storageTimeLimit: .seconds(1),
            clock: clock)
        // No poll for due deliveries (with its claim's time limit) falls due within the commit's second.
        options.durableEvents.pollInterval = .seconds(3_600)
        let kernel = makeKernel([countingModule("com.app.shop", contexts: contexts)], options: options)
        try await kernel.boot()
        let shop = try #require(contexts["com.app.shop"])
        try await shop.state.set(.stockOnDisk, to: 10)
        await kernel.sharedState.load(.ordersCounted)
        // The handlers' first claims are done: the only timer due within the second is the commit's.
        await kernel.durableWorkSettled()
        // Another connection holds the database's write lock: the commit waits for it past its time limit.
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: directory + "/state.sqlite", configuration: holding)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        let committing = Task {
            try await shop.state.transaction { transaction in
                transaction.update(.stockOnDisk) { $0 -= 1 }
                transaction.update(.ordersCounted) { $0 += 1 }
            }
        }
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        await #expect(throws: StateError.self) { try await committing.value }
        try holder.inDatabase { db in try db.execute(sql: "COMMIT") }
        // The late commit lands: both keys, in memory and on disk, or neither.
        try await shop.state.update(.ordersCounted) { $0 += 10 }
        let stored = try await offThePool {
            try DatabaseQueue(path: directory + "/state.sqlite").read { db in
                try ["com.test.stock", "com.test.orders-counted"].map {
                    try String.fetchOne(
                        db, sql: "SELECT CAST(value AS TEXT) FROM mosaic_state WHERE id = ?", arguments: [$0])
                }
            }
        }
        #expect(stored == ["9", "11"], "\(stored)")
        #expect(shop.state[.stockOnDisk] == 9 && shop.state[.ordersCounted] == 11)
        await kernel.shutdown()
    }
}
