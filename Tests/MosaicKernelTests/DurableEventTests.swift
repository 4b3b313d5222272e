import Foundation
import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

struct OrderPlaced: DurableEvent, Equatable {
    static let durableName = "com.test.order-placed"
    let order: Int
}

/// Another type under the same durable name, in a shape the first one's data does not fit.
struct OrderPlacedRenamed: DurableEvent {
    static let durableName = "com.test.order-placed"
    let reference: String
}

/// What a durable handler was handed, in order, with a stream that tells each one as it comes.
final class Handled: Sendable {
    private let all = Locked<[DurableEnvelope<OrderPlaced>]>([])
    private let feed = AsyncStream.makeStream(of: Int.self)

    var envelopes: [DurableEnvelope<OrderPlaced>] { all.withLock { $0 } }

    func record(_ envelope: DurableEnvelope<OrderPlaced>) {
        feed.continuation.yield(
            all.withLock {
                $0.append(envelope)
                return $0.count
            })
    }

    /// Returns once `count` envelopes were handed over in all.
    func waitFor(_ count: Int) async {
        if envelopes.count >= count { return }
        for await handled in feed.stream where handled >= count { return }
    }
}

@Suite(.timeLimit(.minutes(1))) struct DurableEventTests {
    let contexts = Contexts()
    let clock = ManualClock()

    func boot(_ ids: [(ModuleID, Set<Entitlement>)], maximumAttempts: Int = 8) async throws -> Kernel {
        var options = KernelOptions(clock: clock)
        options.durableEvents = DurableEventOptions(
            maximumAttempts: maximumAttempts, firstRetryDelay: .seconds(1), maximumRetryDelay: .seconds(1),
            handlerTimeLimit: .seconds(5), pollInterval: .seconds(1))
        let kernel = makeKernel(
            ids.map { eventModule($0.0, entitlements: $0.1, contexts: contexts) },
            entitlements: Set(ids.flatMap(\.1)), options: options)
        try await kernel.boot()
        return kernel
    }

    /// Moves the clock on, a second at a time, until `done` holds: retries and polls fall due on it. Each move waits
    /// for the handlers' work under way to settle first, so that no time limit of an attempt in flight (or lease of
    /// a claim) passes because the machine was slow.
    func advance(_ kernel: Kernel, until done: () async throws -> Bool) async rethrows {
        while try await !done() {
            await kernel.durableWorkSettled()
            clock.advance(by: .seconds(1))
            await Task.yield()
        }
    }

    @Test("a durable event reaches each handler once, with its id, attempt and sender; memory subscribers get it too")
    func reachesEveryHandler() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", []), ("com.app.ledger", [])])
        let mail = Handled()
        let ledger = Handled()
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") {
            mail.record($0)
        }
        try await #require(contexts["com.app.ledger"]).events.handle(OrderPlaced.self, as: "book") { ledger.record($0) }
        var live = try #require(contexts["com.app.ledger"]).events.subscribe(to: OrderPlaced.self).makeAsyncIterator()
        let shop = try #require(contexts["com.app.shop"])
        for order in 1...3 { try await shop.events.publish(OrderPlaced(order: order)) }
        await mail.waitFor(3)
        await ledger.waitFor(3)
        #expect(mail.envelopes.map(\.event.order) == [1, 2, 3])
        #expect(mail.envelopes.map(\.id) == ledger.envelopes.map(\.id), "one id per event, whoever handles it")
        #expect(Set(mail.envelopes.map(\.id)).count == 3)
        #expect(mail.envelopes.allSatisfy { $0.attempt == 1 && $0.sender == "com.app.shop" })
        #expect(await live.next()?.event == OrderPlaced(order: 1))
        #expect(try await kernel.undeliveredEvents().isEmpty)
        await kernel.shutdown()
        #expect(mail.envelopes.count == 3, "each handler got each event once")
    }

    @Test("a batch and 50 concurrent publishes all reach the handler, each once; a batch keeps its order")
    func batchesAndConcurrentPublishes() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", [])])
        let mail = Handled()
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") {
            mail.record($0)
        }
        let shop = try #require(contexts["com.app.shop"])
        try await shop.events.publish(contentsOf: (1...100).map { OrderPlaced(order: $0) })
        await mail.waitFor(100)
        #expect(mail.envelopes.map(\.event.order) == Array(1...100))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for order in 101...150 { group.addTask { try await shop.events.publish(OrderPlaced(order: order)) } }
            try await group.waitForAll()
        }
        await mail.waitFor(150)
        #expect(Set(mail.envelopes.map(\.event.order)) == Set(1...150))
        #expect(Set(mail.envelopes.map(\.id)).count == 150, "each event stored once, under its own id")
        try await shop.events.publish(contentsOf: [OrderPlaced]())
        await kernel.shutdown()
    }

    @Test("a durable event published from synchronous code is refused, naming the fix, not stored without waiting")
    func synchronousDurablePublishRefused() async throws {
        let kernel = try await boot([("com.app.shop", [])])
        let shop = try #require(contexts["com.app.shop"])
        // A synchronous context picks the synchronous overload.
        let publish: @Sendable () throws(EventError) -> Void = { try shop.events.publish(OrderPlaced(order: 1)) }
        let error = #expect(throws: EventError.self) { try publish() }
        #expect(error?.code == .invalid)
        #expect(error?.message.contains("try await context.events.publish") == true)
        await kernel.shutdown()
    }

    @Test("a failing handler is retried, parked after its last attempt, listed, and handled when resubmitted")
    func retriedParkedResubmitted() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", [])], maximumAttempts: 3)
        let attempts = Handled()
        let healthy = Atomic(false)
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") { envelope in
            attempts.record(envelope)
            guard healthy.load(ordering: .relaxed) else { throw MailError.serverDown }
        }
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 7))
        try await advance(kernel) { !(try await kernel.undeliveredEvents().isEmpty) }
        #expect(attempts.envelopes.map(\.attempt) == [1, 2, 3])
        let parked = try #require(try await kernel.undeliveredEvents().first)
        #expect(parked.reason == .parked && parked.attempts == 3 && parked.subscriber == "com.app.mail/send-receipt")
        #expect(parked.lastError == "serverDown" && parked.type == "com.test.order-placed")
        #expect(parked.event == attempts.envelopes[0].id)

        healthy.store(true, ordering: .relaxed)
        #expect(try await kernel.resubmit(parked.id))
        await attempts.waitFor(4)
        #expect(attempts.envelopes.last?.attempt == 1, "a resubmitted delivery counts its attempts afresh")
        try await advance(kernel) { try await kernel.undeliveredEvents().isEmpty }
        #expect(try await kernel.resubmit(parked.id) == false, "nothing waits under that id any more")
        await kernel.shutdown()
    }

    @Test("a handler that outlives its time limit fails that attempt, and the event comes again")
    func hangingHandler() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", [])])
        let attempts = Handled()
        let gate = Gate()
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") { envelope in
            attempts.record(envelope)
            if envelope.attempt == 1 { await gate.wait() }
        }
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 1))
        await attempts.waitFor(1)
        // The attempt under way hangs: its time limit passes (the watch's timer, set when it started); then the
        // retry falls due.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(5))
        clock.advance(by: .seconds(5))
        await advance(kernel) { attempts.envelopes.count >= 2 }
        #expect(attempts.envelopes.map(\.attempt) == [1, 2])
        gate.open()
        await kernel.shutdown()
    }

    @Test("a module deactivating waits for its running handler, up to its time limit, before deactivate() runs")
    func deactivationWaitsForTheHandler() async throws {
        let log = EventLog()
        var options = KernelOptions(clock: clock)
        options.durableEvents = DurableEventOptions(handlerTimeLimit: .seconds(5))
        let kernel = makeKernel(
            [
                eventModule("com.app.shop", contexts: contexts),
                serviceModule(
                    "com.app.mail", entitlements: ["mail"], log: log, onActivate: { contexts.keep($0) },
                    register: { _ in }),
            ], entitlements: ["mail"], options: options)
        try await kernel.boot()
        let gate = Gate()
        let cancelled = Gate()
        let handled = Handled()
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") { envelope in
            // Ignores its cancellation, as slow handler code may.
            await withTaskCancellationHandler {
                await gate.wait()
            } onCancel: {
                cancelled.open()
            }
            handled.record(envelope)
        }
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 1))
        let revoking = Task { try await kernel.revoke("mail") }
        await cancelled.wait()
        for _ in 0..<1_000 { await Task.yield() }
        #expect(log.deactivations.isEmpty, "deactivate() waits while the handler runs")
        gate.open()
        try await revoking.value
        #expect(log.deactivations == ["com.app.mail"] && handled.envelopes.count == 1)
        #expect(try await kernel.undeliveredEvents().isEmpty)
        await kernel.shutdown()
    }

    @Test("events published while the handler's module is inactive wait for it, and come when it is back")
    func waitsForInactiveHandler() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", ["mail"])])
        let handled = Handled()
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") {
            handled.record($0)
        }
        try await kernel.revoke("mail")
        for order in 1...3 { try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: order)) }
        try await kernel.grant("mail")
        #expect(handled.envelopes.isEmpty, "nothing was handled while the module was out")
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") {
            handled.record($0)
        }
        await handled.waitFor(3)
        #expect(handled.envelopes.map(\.event.order).sorted() == [1, 2, 3])
        await kernel.shutdown()
    }

    @Test("a module's transaction writes its keys and publishes its durable events; the handler gets them")
    func transaction() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", [])])
        let handled = Handled()
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") {
            handled.record($0)
        }
        let shop = try #require(contexts["com.app.shop"])
        let stock = StateKey<Int>.stock
        try await shop.state.transaction { transaction in
            transaction.update(stock) { $0 -= 1 }
            transaction.publish(OrderPlaced(order: 1))
        }
        await handled.waitFor(1)
        #expect(shop.state[stock] == 9 && handled.envelopes.first?.event == OrderPlaced(order: 1))
        await kernel.shutdown()
        await #expect(throws: StateError.self, "a module no longer active writes nothing") {
            try await shop.state.transaction { $0.set(stock, to: 0) }
        }
    }

    @Test("an uninstalled module's waiting events are abandoned and listed, not dropped")
    func uninstalledHandler() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", ["mail"])])
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") { _ in }
        try await kernel.revoke("mail")
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 1))
        try await kernel.uninstall("com.app.mail")
        let abandoned = try await kernel.undeliveredEvents()
        #expect(abandoned.map(\.reason) == [.abandoned])
        #expect(abandoned.first?.lastError == "com.app.mail was uninstalled")
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 2))
        #expect(try await kernel.undeliveredEvents().count == 1, "an uninstalled handler is recorded for no new event")
        await kernel.shutdown()
    }

    @Test("an event its handler's type cannot read is parked at once, with the reason")
    func unreadableEvent() async throws {
        let kernel = try await boot([("com.app.shop", []), ("com.app.mail", [])])
        let called = Atomic(0)
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlacedRenamed.self, as: "send-receipt") { _ in
            called.add(1, ordering: .relaxed)
        }
        try await #require(contexts["com.app.shop"]).events.publish(OrderPlaced(order: 1))
        // The publish wakes the handler, and parking needs no time to pass: the clock stands still. (Moving it on
        // meanwhile could outrun the claim's lease and have the delivery claimed a second time.)
        while try await kernel.undeliveredEvents().isEmpty { await Task.yield() }
        let parked = try #require(try await kernel.undeliveredEvents().first)
        #expect(parked.attempts == 1 && parked.lastError.contains("cannot be read as OrderPlacedRenamed"))
        #expect(called.load(ordering: .relaxed) == 0)
        await kernel.shutdown()
    }

    @Test("a handler's name is taken once per module, and an inactive module neither handles nor publishes")
    func refusals() async throws {
        let kernel = try await boot([("com.app.shop", ["shop"]), ("com.app.mail", [])])
        let mail = try #require(contexts["com.app.mail"])
        try await mail.events.handle(OrderPlaced.self, as: "send-receipt") { _ in }
        let taken = await #expect(throws: EventError.self) {
            try await mail.events.handle(OrderPlaced.self, as: "send-receipt") { _ in }
        }
        #expect(taken?.message.contains("already has a durable handler named 'send-receipt'") == true)
        await #expect(throws: EventError.self) { try await mail.events.handle(OrderPlaced.self, as: "a/b") { _ in } }
        let shop = try #require(contexts["com.app.shop"])
        try await kernel.revoke("shop")
        #expect(throws: EventError.self) { try shop.events.publish(OrderPlaced(order: 1)) }
        await #expect(throws: EventError.self) { try await shop.events.handle(OrderPlaced.self, as: "audit") { _ in } }
        await #expect(throws: EventError.self) { try await kernel.events.handle(OrderPlaced.self, as: "host") { _ in } }
        await kernel.shutdown()
    }
}

enum MailError: Error { case serverDown }
