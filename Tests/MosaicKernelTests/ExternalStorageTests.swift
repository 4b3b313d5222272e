import Foundation
import Mosaic
import Synchronization
import Testing

@testable import MosaicKernel

/// External storage in memory, whose watch tells nobody: what an instance sees before another instance's change has
/// reached it. `change` writes a row as another instance would.
final class SilentStateStore: TransactionalStateStore {
    var servesSeveralInstances: Bool { true }
    private let rows = Locked<[String: (saved: SavedState, revision: Int64)]>([:])
    private let revisions = Atomic<Int64>(0)

    @discardableResult
    func change(_ id: String, to json: String) -> Int64 {
        let revision = revisions.add(1, ordering: .relaxed).newValue
        rows.withLock { $0[id] = (SavedState(data: Data(json.utf8), version: 1), revision) }
        return revision
    }

    /// Runs after a read of a row has been answered, before its answer reaches the reader: what lands meanwhile.
    let afterRead = Locked<(@Sendable (String) -> Void)?>(nil)

    /// Deletes the row, as an operator or another instance would.
    func remove(_ id: String) {
        _ = rows.withLock { $0.removeValue(forKey: id) }
    }

    func value(_ id: String) -> String? {
        rows.withLock { $0[id].map { String(decoding: $0.saved.data, as: UTF8.self) } }
    }

    func loadRevision(_ id: String) throws -> (saved: SavedState, revision: Int64)? {
        let row = rows.withLock { $0[id] }
        afterRead.withLock { $0 }?(id)
        return row
    }
    func load(_ id: String) throws -> SavedState? { try loadRevision(id)?.saved }
    func save(_ data: Data, version: Int, for id: String) throws {
        _ = try save(data, version: version, for: id, replacing: nil)
    }
    func park(_ id: String, reason: String) throws -> String { "nowhere" }
    func watch(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch { StoreWatch {} }

    /// The events transactions stored, in order.
    let events = Locked<[OutboxEvent]>([])

    func commit(_ rows: [StateRow], events: [OutboxEvent], completing: DeliveryCompletion?) throws -> StateCommit {
        self.rows.withLock { stored in
            if let stale = rows.first(where: { stored[$0.id]?.revision != $0.revision }) {
                return .conflict(id: stale.id, current: stored[stale.id]?.saved, revision: stored[stale.id]?.revision)
            }
            var revisions: [String: Int64] = [:]
            for row in rows {
                let revision = self.revisions.add(1, ordering: .relaxed).newValue
                revisions[row.id] = revision
                stored[row.id] = (SavedState(data: row.data, version: row.version), revision)
            }
            self.events.withLock { $0 += events }
            return .committed(revisions)
        }
    }

    func save(_ data: Data, version: Int, for id: String, replacing revision: Int64?) throws -> StateSave {
        rows.withLock { rows in
            guard rows[id]?.revision == revision else {
                return .conflict(current: rows[id]?.saved, revision: rows[id]?.revision)
            }
            let new = revisions.add(1, ordering: .relaxed).newValue
            rows[id] = (SavedState(data: data, version: version), new)
            return .saved(revision: new)
        }
    }
}

struct ExternalStorageTests {
    static let city = StateKey("test.city", initial: "Chicago", persistence: .database)

    @Test func aWriteEqualToAStaleValueStillReplacesWhatAnotherInstanceSaved() async throws {
        let store = SilentStateStore()
        let hub = StateHub(transactional: store)
        try await hub.apply(Self.city, as: StateHub.host) { $0 = "Oslo" }
        // Another instance saves Tokyo; its notification has not arrived here, so this instance still reads Oslo.
        store.change("test.city", to: "\"Tokyo\"")
        #expect(hub.read(Self.city) == "Oslo")
        // Setting Oslo again is a real change for every other instance: it must reach the store.
        try await hub.apply(Self.city, as: StateHub.host) { $0 = "Oslo" }
        #expect(store.value("test.city") == "\"Oslo\"")
        #expect(hub.read(Self.city) == "Oslo")
    }

    @Test func aWriteRunsItsChangeAgainOnTheValueAnotherInstanceSaved() async throws {
        let store = SilentStateStore()
        let hub = StateHub(transactional: store)
        let count = StateKey("test.count", initial: 0, persistence: .database)
        try await hub.apply(count, as: StateHub.host) { $0 += 1 }
        store.change("test.count", to: "41")
        try await hub.apply(count, as: StateHub.host) { $0 += 1 }
        #expect(store.value("test.count") == "42")
        #expect(hub.read(count) == 42)
    }

    @Test func aResynchronizationTakesARowDeletedMeanwhileAsGone() async throws {
        let store = SilentStateStore()
        let hub = StateHub(transactional: store)
        let untouched = StateKey("test.untouched", initial: "initial", persistence: .database)
        try await hub.apply(Self.city, as: StateHub.host) { $0 = "Oslo" }
        #expect(hub.read(untouched) == "initial")
        // The row is deleted while the watch is down: no notification reaches this instance.
        store.remove("test.city")
        #expect(hub.read(Self.city) == "Oslo")
        await hub.resynchronize()
        #expect(hub.read(Self.city) == "Chicago", "back to the initial value, as the other instances read it")
        #expect(hub.read(untouched) == "initial")
        // A write after it starts from the initial value and reaches the store.
        try await hub.apply(Self.city, as: StateHub.host) { $0 += "!" }
        #expect(store.value("test.city") == "\"Chicago!\"")
    }

    @Test func aResynchronizationKeepsAnOwnWriteThatLandedWhileItReadTheRowAsGone() async throws {
        let store = SilentStateStore()
        let hub = StateHub(transactional: store)
        try await hub.apply(Self.city, as: StateHub.host) { $0 = "Oslo" }
        store.remove("test.city")
        // The resynchronization's read finds no row; before its answer arrives, a write of this instance lands.
        store.afterRead.withLock { afterRead in
            afterRead = { [weak hub] id in
                guard id == "test.city" else { return }
                let revision = store.change(id, to: "\"Paris\"")
                hub?.publish(id, value: "Paris", revision: revision)
            }
        }
        await hub.resynchronize()
        store.afterRead.withLock { $0 = nil }
        #expect(hub.read(Self.city) == "Paris", "the write is newer than the deletion the read saw")
        #expect(store.value("test.city") == "\"Paris\"")
    }

    /// A hub over `store` with an outbox, as a kernel makes it.
    static func hubWithOutbox(_ store: SilentStateStore) -> StateHub {
        let telemetry = MosaicKernel.Telemetry(options: KernelOptions())
        let clock = KernelClock(ContinuousClock())
        let outbox = DurableOutbox(
            store: MemoryEventStore(clock: clock), options: DurableEventOptions(), clock: clock, telemetry: telemetry)
        return StateHub(transactional: store, events: EventHub(telemetry: telemetry, outbox: outbox))
    }

    @Test func aTransactionCommitsItsWritesAndEventsTogetherAndRunsAgainOnAConflict() async throws {
        let store = SilentStateStore()
        let hub = Self.hubWithOutbox(store)
        let count = StateKey("test.count", initial: 0, persistence: .database)
        try await hub.apply(Self.city, as: StateHub.host) { $0 = "Oslo" }
        // Another instance saves Tokyo, unseen here: the transaction's first try conflicts, and it runs again.
        store.change("test.city", to: "\"Tokyo\"")
        var transaction = StateTransaction()
        transaction.update(Self.city) { $0 += "!" }
        transaction.update(count) { $0 += 1 }
        transaction.update(count) { $0 += 1 }
        transaction.publish(OrderPlaced(order: 7))
        try await hub.commit(transaction, as: StateHub.host)
        #expect(store.value("test.city") == "\"Tokyo!\"")
        #expect(store.value("test.count") == "2", "two changes of one key in a transaction build on each other")
        #expect(hub.read(Self.city) == "Tokyo!" && hub.read(count) == 2)
        #expect(store.events.withLock { $0.map(\.type) } == ["com.test.order-placed"], "the event was stored once")
    }

    @Test func aTransactionWhoseChangeOfAKeyInMemoryThrowsStoresNothing() async throws {
        let store = SilentStateStore()
        let hub = Self.hubWithOutbox(store)
        let visits = StateKey("test.visits", initial: 0)
        var transaction = StateTransaction()
        transaction.set(Self.city, to: "Lima")
        transaction.publish(OrderPlaced(order: 9))
        transaction.update(visits) { _ in throw MailError.serverDown }
        await #expect(throws: MailError.self) { try await hub.commit(transaction, as: StateHub.host) }
        #expect(store.value("test.city") == nil && store.events.withLock { $0.isEmpty })
    }

    @Test func withoutSharedStorageATransactionWhoseSecondChangeThrowsStoresNothing() async throws {
        let hub = StateHub()
        let visits = StateKey("test.visits", initial: 0)
        var transaction = StateTransaction()
        transaction.set(Self.city, to: "Lima")
        transaction.update(visits) { _ in throw MailError.serverDown }
        await #expect(throws: MailError.self) { try await hub.commit(transaction, as: StateHub.host) }
        #expect(hub.read(Self.city) == "Chicago")
    }

    @Test func aTransactionWhoseChangeThrowsStoresNothing() async throws {
        let store = SilentStateStore()
        let hub = Self.hubWithOutbox(store)
        var transaction = StateTransaction()
        transaction.set(Self.city, to: "Lima")
        transaction.update(Self.city) { _ in throw MailError.serverDown }
        transaction.publish(OrderPlaced(order: 8))
        await #expect(throws: MailError.self) { try await hub.commit(transaction, as: StateHub.host) }
        #expect(store.value("test.city") == nil && hub.read(Self.city) == "Chicago")
        #expect(store.events.withLock { $0.isEmpty })
    }
}
