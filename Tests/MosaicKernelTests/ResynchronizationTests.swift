import Foundation
import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

/// External storage in memory that counts its reads and, while the test holds it, keeps each batch read waiting.
final class CountingStateStore: TransactionalStateStore {
    let rows = SilentStateStore()
    /// How many keys each batch read asked for, in order; and how many single reads there were.
    let batches = Locked<[Int]>([])
    let singles = Locked(0)
    /// How many batch reads wait for the storage now, and the most that ever did at once.
    let reading = Locked((now: 0, most: 0))
    private let gate = Locked<Gate?>(nil)

    var servesSeveralInstances: Bool { true }

    func loadRevision(_ id: String) async throws -> (saved: SavedState, revision: Int64)? {
        singles.withLock { $0 += 1 }
        return try rows.loadRevision(id)
    }

    func loadRevisions(_ ids: [String]) async throws -> [String: (saved: SavedState, revision: Int64)] {
        batches.withLock { $0.append(ids.count) }
        reading.withLock { $0 = ($0.now + 1, max($0.most, $0.now + 1)) }
        defer { reading.withLock { $0.now -= 1 } }
        if let gate = gate.withLock({ $0 }) { await gate.wait() }
        var found: [String: (saved: SavedState, revision: Int64)] = [:]
        for id in ids { found[id] = try rows.loadRevision(id) }
        return found
    }

    func load(_ id: String) async throws -> SavedState? { try await loadRevision(id)?.saved }
    func save(_ data: Data, version: Int, for id: String) throws { try rows.save(data, version: version, for: id) }
    func save(_ data: Data, version: Int, for id: String, replacing revision: Int64?) throws -> StateSave {
        try rows.save(data, version: version, for: id, replacing: revision)
    }
    func park(_ id: String, reason: String) throws -> String { "nowhere" }
    func watch(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch { StoreWatch {} }
    func commit(_ rows: [StateRow], events: [OutboxEvent], completing: DeliveryCompletion?) throws -> StateCommit {
        try self.rows.commit(rows, events: events, completing: completing)
    }

    /// Every batch read from now on waits until ``letGo()``.
    func hold() { gate.withLock { $0 = Gate() } }

    func letGo() {
        let held = gate.withLock { gate in
            defer { gate = nil }
            return gate
        }
        held?.open()
    }
}

struct ResynchronizationTests {
    /// A hub on `store` holding 1,001 shared keys, each loaded.
    static func hub(on store: CountingStateStore) async -> (StateHub, [StateKey<Int>]) {
        let hub = StateHub(transactional: store, clock: KernelClock(ManualClock()))
        let keys = (0..<1_001).map { StateKey("test.key-\($0)", initial: 0, persistence: .database) }
        for key in keys { await hub.load(key) }
        store.singles.withLock { $0 = 0 }
        return (hub, keys)
    }

    @Test("a resynchronization reads the keys held in batches of 500, one query each, and takes the newer rows")
    func batches() async throws {
        let store = CountingStateStore()
        let (hub, keys) = await Self.hub(on: store)
        store.rows.change("test.key-7", to: "7")
        store.rows.change("test.key-1000", to: "1000")
        await hub.resynchronize()
        #expect(store.batches.withLock { $0 } == [500, 500, 1])
        #expect(store.singles.withLock { $0 } == 0)
        #expect(hub.read(keys[7]) == 7)
        #expect(hub.read(keys[1_000]) == 1_000)
        #expect(hub.read(keys[8]) == 0)
    }

    @Test("a resynchronization asked for while one runs waits for it: one pass at a time, and one more after it")
    func onePassAtATime() async throws {
        let store = CountingStateStore()
        let (hub, keys) = await Self.hub(on: store)
        store.hold()
        let first = Task { await hub.resynchronize() }
        await eventually { store.reading.withLock { $0.now } == 1 }
        // Asked for three more times while the first pass waits: each returns at once, and none starts now.
        for _ in 0..<3 { await hub.resynchronize() }
        #expect(store.reading.withLock { $0.now } == 1)
        store.rows.change("test.key-3", to: "3")
        store.letGo()
        await first.value
        #expect(store.reading.withLock { $0.most } == 1)
        #expect(store.batches.withLock { $0 } == [500, 500, 1, 500, 500, 1], "the pass asked for, and one more")
        #expect(hub.read(keys[3]) == 3, "the pass after the first reads what changed during it")
    }
}
