import Foundation
import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

/// The outbox in memory, whose claims, lists and resubmits the test stalls (a database that stopped answering)
/// until it lets them go.
final class StallingOutbox: DurableEventStore {
    let store: MemoryEventStore
    private let gate = Locked<Gate?>(nil)
    /// How many calls have reached the outbox while it was stalled.
    let stalledCalls = Locked(0)

    init(clock: ManualClock) { store = MemoryEventStore(clock: KernelClock(clock)) }

    func subscribe(_ subscriber: String, module: ModuleID, to type: String) async throws {
        store.subscribe(subscriber, module: module, to: type)
    }
    func append(_ events: [OutboxEvent]) async throws { store.append(events) }
    func claim(_ subscriber: String, limit: Int, lease: Duration) async throws -> [DurableDelivery] {
        await waitIfStalled()
        return store.claim(subscriber, limit: limit, lease: lease)
    }
    func complete(_ deliveries: [Int64], claim: UUID) async throws -> Int {
        store.complete(deliveries, claim: claim)
    }
    func retry(_ delivery: Int64, claim: UUID, after delay: Duration, error: String) async throws {
        store.retry(delivery, claim: claim, after: delay, error: error)
    }
    func park(_ delivery: Int64, claim: UUID, error: String) async throws {
        store.park(delivery, claim: claim, error: error)
    }
    func release(_ deliveries: [Int64], claim: UUID) async throws { store.release(deliveries, claim: claim) }
    func undelivered(limit: Int) async throws -> [UndeliveredEvent] {
        await waitIfStalled()
        return store.undelivered(limit: limit)
    }
    func resubmit(_ delivery: Int64) async throws -> Bool {
        await waitIfStalled()
        return store.resubmit(delivery)
    }
    func abandon(module: ModuleID, reason: String) async throws { store.abandon(module: module, reason: reason) }
    func handlersWithPendingDeliveries() async throws -> [RecordedHandler] {
        store.handlersWithPendingDeliveries()
    }
    func abandon(subscriber: String, reason: String) async throws {
        store.abandon(subscriber: subscriber, reason: reason)
    }
    func watch(_ onAppend: @escaping @Sendable (_ subscriber: String) -> Void) -> StoreWatch {
        store.watch(onAppend)
    }

    /// Every stalling call from now on waits until ``letGo()``.
    func stall() { gate.withLock { $0 = Gate() } }

    func letGo() {
        let held = gate.withLock { gate in
            defer { gate = nil }
            return gate
        }
        held?.open()
    }

    private func waitIfStalled() async {
        guard let gate = gate.withLock({ $0 }) else { return }
        stalledCalls.withLock { $0 += 1 }
        await gate.wait()
    }
}

@Suite(.timeLimit(.minutes(1))) struct StalledOutboxTests {
    @Test(
        "with the outbox stalled, the undelivered list and a resubmit fail at the storage time limit, and shutdown waits for no handler's claim"
    )
    func stalledOutbox() async throws {
        let clock = ManualClock()
        let outbox = StallingOutbox(clock: clock)
        var options = KernelOptions(storageTimeLimit: .seconds(5), clock: clock)
        // No poll falls due during the test: only the storage calls' timers are within 5 s.
        options.durableEvents = DurableEventOptions(handlerTimeLimit: .seconds(5), pollInterval: .seconds(3_600))
        options.externalStorage = ExternalStorage(
            state: SilentStateStore(), policy: FlakyPolicyStore(), events: outbox,
            description: "an outbox that stalls when the test says")
        let contexts = Contexts()
        let kernel = makeKernel([eventModule("com.app.mail", contexts: contexts)], options: options)
        try await kernel.boot()
        outbox.stall()
        // The handler's first claim reaches the outbox and waits.
        try await #require(contexts["com.app.mail"]).events.handle(OrderPlaced.self, as: "send-receipt") { _ in }
        await eventually { outbox.stalledCalls.withLock { $0 } == 1 }

        let list = Task { try await kernel.undeliveredEvents() }
        let resubmit = Task { try await kernel.resubmit(1) }
        await clock.sleepers(reaching: 3, dueWithin: .seconds(5))
        await eventually { outbox.stalledCalls.withLock { $0 } == 3 }

        // The module's deactivation waits for no claim's answer.
        await kernel.shutdown()
        #expect(await kernel.state(of: "com.app.mail") == .deactivated)

        clock.advance(by: .seconds(5))
        let listed = await #expect(throws: KernelError.self) { try await list.value }
        #expect(listed?.code == .storageUnavailable)
        let resubmitted = await #expect(throws: KernelError.self) { try await resubmit.value }
        #expect(resubmitted?.code == .storageUnavailable)
        outbox.letGo()
    }
}
