import Foundation
import Mosaic
import PostgresNIO
import Synchronization
import Testing

@testable import MosaicKernel
@testable import MosaicPostgres

struct Receipt: DurableEvent {
    static let durableName = "com.test.receipt"
    let order: Int
}

/// A module that runs `onActivate` with its context (for a test to act as the module).
struct ClosureModule: Module {
    static let manifest = Manifest(id: "com.test.closure", version: "1.0.0")
    var onActivate: @Sendable (ActivationContext) async throws -> Void = { _ in }
    init() {}
    init(_ onActivate: @escaping @Sendable (ActivationContext) async throws -> Void) { self.onActivate = onActivate }
    func activate(_ context: ActivationContext) async throws { try await onActivate(context) }
}

/// Which events each instance's handler got, and how often.
final class Deliveries: Sendable {
    private let handled = Locked<[(event: UUID, attempt: Int, instance: String)]>([])
    private let feed = AsyncStream.makeStream(of: Int.self)

    var all: [(event: UUID, attempt: Int, instance: String)] { handled.withLock { $0 } }

    func record(_ envelope: DurableEnvelope<Receipt>, on instance: String) {
        let count = handled.withLock { handled in
            handled.append((envelope.id, envelope.attempt, instance))
            return Set(handled.map(\.event)).count
        }
        feed.continuation.yield(count)
    }

    /// Returns once `count` distinct events were handled.
    func waitFor(distinct count: Int) async {
        if Set(all.map(\.event)).count >= count { return }
        for await distinct in feed.stream where distinct >= count { return }
    }
}

/// An instance running a shop (publishes) and a mail module whose handler `send-receipt` runs `handle`.
struct DurableInstance {
    let database: PostgresBackend
    let kernel: Kernel
    let shop: ActivationContext

    static func boot(
        _ url: String, options durable: DurableEventOptions = DurableEventOptions(),
        handle: (@Sendable (DurableEnvelope<Receipt>) async throws -> Void)?
    ) async throws -> DurableInstance {
        try await booting(url, options: durable) { events in
            if let handle { try await events.handle(Receipt.self, as: "send-receipt", handle) }
        }
    }

    /// An instance whose mail module registers its handlers with `register`, or registers none when it is `nil`.
    static func booting(
        _ url: String, options durable: DurableEventOptions = DurableEventOptions(),
        registering register: (@Sendable (Events) async throws -> Void)?
    ) async throws -> DurableInstance {
        let database = try await PostgresBackend.connect(url: url)
        var options = KernelOptions()
        options.externalStorage = database.storage
        options.durableEvents = durable
        let shop = Locked<ActivationContext?>(nil)
        var factories = [
            ModuleFactory(
                manifest: Manifest(id: "com.test.shop", version: "1.0.0"), register: { $0.writes(.counter) },
                make: { ClosureModule { context in shop.withLock { $0 = context } } })
        ]
        if let register {
            factories.append(
                ModuleFactory(
                    manifest: Manifest(id: "com.test.mail", version: "1.0.0", entitlements: ["mail"]),
                    register: { $0.writes(.counter) }
                ) {
                    ClosureModule { context in try await register(context.events) }
                })
        }
        var catalog = ModuleCatalog()
        for factory in factories { catalog.add(factory) }
        let kernel = Kernel(
            catalog: catalog, host: HostEnvironment(version: "1.0.0"),
            entitlements: .granted(["mail"]), options: options)
        try await kernel.boot()
        return DurableInstance(database: database, kernel: kernel, shop: try #require(shop.withLock { $0 }))
    }

    func stop() async {
        await kernel.shutdown()
        await database.close()
    }
}

@Suite(.serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason))
struct PostgresDurableEventTests {
    /// Short enough for a test to see a lapsed claim taken over; the lease is three times the handler limit.
    static let quick = DurableEventOptions(
        maximumAttempts: 2, firstRetryDelay: .milliseconds(20), maximumRetryDelay: .milliseconds(20),
        handlerTimeLimit: .milliseconds(300), claimLease: .milliseconds(900), pollInterval: .milliseconds(50))

    @Test func twoInstancesShareOneHandlerWithoutHandlingAnEventTwice() async throws {
        let url = try await TestServer.running().makeDatabase()
        let deliveries = Deliveries()
        let a = try await DurableInstance.boot(url) { deliveries.record($0, on: "a") }
        let b = try await DurableInstance.boot(url) { deliveries.record($0, on: "b") }
        let count = 400
        for order in 1...count { try await a.shop.events.publish(Receipt(order: order)) }
        await deliveries.waitFor(distinct: count)
        let handled = deliveries.all
        #expect(handled.count == count, "no event was handled twice while nothing crashed")
        #expect(handled.allSatisfy { $0.attempt == 1 })
        print(
            "a handled \(handled.filter { $0.instance == "a" }.count), b \(handled.filter { $0.instance == "b" }.count)"
        )
        // Each instance records a batch done after the batch; stopping waits for that.
        await a.stop()
        await b.stop()
        let rows = try await TestServer.running().execute(
            "SELECT count(*) FROM mosaic_delivery WHERE state = 'done'", in: PostgresSharedStateTests.name(of: url))
        #expect(try rows.first?.decode(Int.self) == count)
    }

    @Test func aClaimLeftByACrashedInstanceIsTakenOver() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let database = PostgresSharedStateTests.name(of: url)
        let publisher = try await DurableInstance.boot(url, options: Self.quick, handle: nil)
        // The crashed instance: it registered the handler, claimed the event, and vanished without a word.
        _ = try await server.execute(
            """
            INSERT INTO mosaic_event_handler (subscriber, module, event_type)
            VALUES ('com.test.mail/send-receipt', 'com.test.mail', 'com.test.receipt')
            """, in: database)
        try await publisher.shop.events.publish(Receipt(order: 1))
        _ = try await server.execute(
            "UPDATE mosaic_delivery SET attempts = 1, claimed_until = now() + interval '1 second'", in: database)
        let deliveries = Deliveries()
        let survivor = try await DurableInstance.boot(url, options: Self.quick) { deliveries.record($0, on: "b") }
        await deliveries.waitFor(distinct: 1)
        #expect(deliveries.all.map(\.attempt) == [2], "the survivor's attempt follows the crashed one's")
        await survivor.stop()
        await publisher.stop()
    }

    @Test func aParkedEventIsListedOnEveryInstanceAndResubmittedFromAny() async throws {
        let url = try await TestServer.running().makeDatabase()
        let healthy = Atomic(false)
        let deliveries = Deliveries()
        let a = try await DurableInstance.boot(url, options: Self.quick) { envelope in
            guard healthy.load(ordering: .relaxed) else { throw MailServerDown() }
            deliveries.record(envelope, on: "a")
        }
        let b = try await DurableInstance.boot(url, options: Self.quick, handle: nil)
        try await b.shop.events.publish(Receipt(order: 9))
        var parked: [UndeliveredEvent] = []
        while parked.isEmpty {
            parked = try await b.kernel.undeliveredEvents()
            await Task.yield()
        }
        #expect(parked.map(\.reason) == [.parked] && parked.first?.attempts == 2)
        #expect(
            parked.first?.lastError == "MailServerDown()" && parked.first?.subscriber == "com.test.mail/send-receipt")
        healthy.store(true, ordering: .relaxed)
        #expect(try await b.kernel.resubmit(try #require(parked.first).id))
        await deliveries.waitFor(distinct: 1)
        #expect(deliveries.all.first?.event == parked.first?.event)
        await a.stop()
        await b.stop()
    }

    @Test func transactionsOnTwoInstancesKeepEveryWriteWithItsEvent() async throws {
        let url = try await TestServer.running().makeDatabase()
        let deliveries = Deliveries()
        let a = try await DurableInstance.boot(url) { deliveries.record($0, on: "a") }
        let b = try await DurableInstance.boot(url, handle: nil)
        let perInstance = 20
        await withTaskGroup(of: Void.self) { group in
            for instance in [a, b] {
                group.addTask {
                    for order in 1...perInstance {
                        // A transaction that loses every race is refused whole; running it again is the caller's.
                        var refusals = 0
                        while await
                            (try? instance.shop.state.transaction { transaction in
                                transaction.update(.counter) { $0 += 1 }
                                transaction.publish(Receipt(order: order))
                            }) == nil, refusals < 100
                        {
                            refusals += 1
                        }
                        #expect(refusals < 100, "a transaction was refused 100 times in a row")
                    }
                }
            }
        }
        await deliveries.waitFor(distinct: 2 * perInstance)
        #expect(await first(a.kernel.sharedState.values(of: .counter)) { $0 == 2 * perInstance } == 2 * perInstance)
        await a.stop()
        await b.stop()
        #expect(deliveries.all.count == 2 * perInstance, "one event per committed write, none from a rolled-back try")
        let events = try await TestServer.running().execute(
            "SELECT count(*) FROM mosaic_event", in: PostgresSharedStateTests.name(of: url))
        #expect(try events.first?.decode(Int.self) == 2 * perInstance)
    }

    @Test func anUninstalledHandlersEventsAreAbandonedForEveryInstance() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await DurableInstance.boot(url, options: Self.quick) { _ in }
        try await a.kernel.revoke("mail")
        try await a.shop.events.publish(Receipt(order: 1))
        try await a.kernel.uninstall("com.test.mail")
        let b = try await DurableInstance.boot(url, options: Self.quick, handle: nil)
        let abandoned = try await b.kernel.undeliveredEvents()
        #expect(abandoned.map(\.reason) == [.abandoned])
        #expect(abandoned.first?.lastError == "com.test.mail was uninstalled")
        await a.stop()
        await b.stop()
    }

    @Test func anUninstallOnOneInstanceLeavesTheHandlerToAnotherStillRunningIt() async throws {
        let url = try await TestServer.running().makeDatabase()
        let deliveries = Deliveries()
        let a = try await DurableInstance.boot(url, options: Self.quick) { deliveries.record($0, on: "a") }
        let b = try await DurableInstance.boot(url, options: Self.quick) { deliveries.record($0, on: "b") }
        try await a.kernel.revoke("mail")
        try await b.kernel.revoke("mail")
        try await a.shop.events.publish(Receipt(order: 1))
        try await a.kernel.uninstall("com.test.mail")
        // B still runs the handler: the delivery waits for it (before, it was abandoned for every instance).
        #expect(try await a.kernel.undeliveredEvents().isEmpty)
        try await b.kernel.grant("mail")
        await deliveries.waitFor(distinct: 1)
        #expect(deliveries.all.map(\.instance) == ["b"])
        await a.stop()
        await b.stop()
    }

    @Test(arguments: [false, true])
    func anInstanceThatStoppedOrFellSilentNoLongerKeepsAHandler(silent: Bool) async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await DurableInstance.boot(url, options: Self.quick) { _ in }
        try await a.kernel.revoke("mail")
        try await a.shop.events.publish(Receipt(order: 1))
        if silent {
            // Another instance runs the handler but was last seen an hour ago, long before the liveness bound.
            let name = PostgresSharedStateTests.name(of: url)
            let other = "'00000000-0000-0000-0000-00000000000b'"
            _ = try await TestServer.running().execute(
                "INSERT INTO mosaic_instance (id, seen_at) VALUES (\(other), now() - interval '1 hour')", in: name)
            _ = try await TestServer.running().execute(
                "INSERT INTO mosaic_event_handler_instance (subscriber, instance) "
                    + "SELECT subscriber, \(other) FROM mosaic_event_handler", in: name)
        } else {
            // Another instance ran it, and stopped.
            let b = try await DurableInstance.boot(url, options: Self.quick) { _ in }
            await b.stop()
        }
        try await a.kernel.uninstall("com.test.mail")
        #expect(try await a.kernel.undeliveredEvents().map(\.reason) == [.abandoned])
        await a.stop()
    }

    /// A backlog behind a long retention: 100,000 done deliveries kept, 20,000 pending after them. The planner,
    /// told that a sixth of the rows are pending, walked the primary key in order through every done one (35 ms a
    /// claim) until claims took the earliest due first through the pending ones' index.
    @Test func aClaimReadsNoDoneDeliveryHoweverManyAreKept() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let name = PostgresSharedStateTests.name(of: url)
        let database = try await PostgresBackend.connect(url: url)
        for statement in [
            "INSERT INTO mosaic_event (id, event_type, payload, sender) SELECT gen_random_uuid(), 'kept', '{}', "
                + "'com.test.shop' FROM generate_series(1, 100000)",
            // Pending first, then done, as handlers leave them.
            "INSERT INTO mosaic_delivery (event_id, subscriber) SELECT id, 'com.test.mail/count' FROM mosaic_event "
                + "ORDER BY published_at",
            // Statistics taken while they were pending (autovacuum runs when it will).
            "ANALYZE mosaic_delivery",
            "UPDATE mosaic_delivery SET state = 'done', completed_at = now()",
            "INSERT INTO mosaic_event (id, event_type, payload, sender) SELECT gen_random_uuid(), 'waiting', '{}', "
                + "'com.test.shop' FROM generate_series(1, 20000)",
            "INSERT INTO mosaic_delivery (event_id, subscriber) SELECT id, 'com.test.mail/count' FROM mosaic_event "
                + "WHERE event_type = 'waiting' ORDER BY published_at",
        ] {
            try await server.execute(statement, in: name)
        }
        // The claim is a prepared statement: planned for its values at first (a custom plan), and then, the server
        // may decide, once for any values (the generic plan). Either must go through the pending ones' index.
        for mode in ["force_custom_plan", "force_generic_plan"] {
            let json = try await database.connections.transaction { connection in
                let logger = database.connections.logger
                _ = try await connection.query("SET LOCAL plan_cache_mode = \(unescaped: mode)", logger: logger)
                _ = try await connection.query(
                    PostgresQuery(unsafeSQL: "PREPARE planned AS " + PostgresEventStore.Claim.sql), logger: logger)
                let plan = try await connection.query(
                    "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE planned('com.test.mail/count', 32, 60, gen_random_uuid())",
                    logger: logger
                ).collect()
                _ = try await connection.query("DEALLOCATE planned", logger: logger)
                return try plan.first?.decode(String.self) ?? ""
            }
            // Every row a scan read and dropped: done deliveries, when the claim walks through them.
            let dropped = try NSRegularExpression(pattern: #""Rows Removed by Filter": ([0-9]+)"#)
                .matches(in: json, range: NSRange(json.startIndex..., in: json))
                .compactMap { Range($0.range(at: 1), in: json).flatMap { Int(json[$0]) } }
            #expect(dropped.reduce(0, +) < 1_000, "\(mode): the claim read and dropped \(dropped) rows: \(json)")
            #expect(json.contains("mosaic_delivery_next"), "\(mode): \(json)")
        }
        await database.close()
    }
}

struct MailServerDown: Error {}

@Suite(.serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason))
struct PostgresTransactionalHandlerTests {
    @Test func twoInstancesCountingInTheirHandlersTransactionsCountEachEventOnce() async throws {
        let url = try await TestServer.running().makeDatabase()
        let counting: @Sendable (Events) async throws -> Void = { events in
            try await events.handle(Receipt.self, as: "count") { _, transaction in
                transaction.update(.counter) { $0 += 1 }
            }
        }
        let a = try await DurableInstance.booting(url, registering: counting)
        let b = try await DurableInstance.booting(url, registering: counting)
        let count = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for order in 1...count { group.addTask { try await a.shop.events.publish(Receipt(order: order)) } }
            try await group.waitForAll()
        }
        #expect(await first(b.kernel.sharedState.values(of: .counter)) { $0 == count } == count)
        await a.stop()
        await b.stop()
        let name = PostgresSharedStateTests.name(of: url)
        let done = try await TestServer.running().execute(
            "SELECT count(*) FROM mosaic_delivery WHERE state = 'done'", in: name)
        #expect(try done.first?.decode(Int.self) == count)
        let counter = try await TestServer.running().execute(
            "SELECT value FROM mosaic_state WHERE id = 'com.test.counter'", in: name)
        #expect(try counter.first?.decode(String.self) == "\(count)")
    }

    @Test func aCommitWhoseClaimRanOutAndWasClaimedAgainRollsBack() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let name = PostgresSharedStateTests.name(of: url)
        let instance = try await DurableInstance.booting(url, registering: nil)
        let outbox = await instance.kernel.eventHub.outbox.store
        let hub = await instance.kernel.stateHub
        try await outbox.subscribe("com.test.mail/by-hand", module: "com.test.mail", to: Receipt.durableName)
        try await instance.shop.events.publish(Receipt(order: 1))
        let first = try #require(try await outbox.claim("com.test.mail/by-hand", limit: 1, lease: .seconds(60)).first)
        // Its lease ran out (the instance hung past it) and another claim took the delivery.
        _ = try await server.execute("UPDATE mosaic_delivery SET claimed_until = now() - interval '1 second'", in: name)
        let second = try #require(try await outbox.claim("com.test.mail/by-hand", limit: 1, lease: .seconds(60)).first)
        #expect(second.id == first.id && second.claim != first.claim)
        var count = StateTransaction()
        count.update(.counter) { $0 += 1 }
        count.publish(Receipt(order: 2))
        await #expect(throws: StaleDelivery.self) {
            try await hub.commit(
                count, as: "com.test.shop", completing: DeliveryCompletion(delivery: first.id, claim: first.claim))
        }
        let afterStale = try await server.execute(
            "SELECT (SELECT count(*) FROM mosaic_state), (SELECT count(*) FROM mosaic_event)", in: name)
        let (rows, events) = try #require(try afterStale.first?.decode((Int, Int).self))
        #expect(rows == 0 && events == 1, "neither the write nor the event was stored")
        try await hub.commit(
            count, as: "com.test.shop", completing: DeliveryCompletion(delivery: second.id, claim: second.claim))
        let delivery = try await server.execute(
            "SELECT state, attempts FROM mosaic_delivery WHERE id = \(second.id)", in: name)
        let (state, attempts) = try #require(try delivery.first?.decode((String, Int).self))
        #expect(state == "done" && attempts == 2)
        await #expect(throws: StaleDelivery.self, "a delivery completes once") {
            try await hub.commit(
                count, as: "com.test.shop", completing: DeliveryCompletion(delivery: second.id, claim: second.claim))
        }
        await instance.stop()
    }
}
