import Foundation
import GRDB
import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

/// External storage whose saves never answer until the test lets them go (loads answer at once: nothing is saved).
final class UnansweringStore: TransactionalStateStore, PolicyStore {
    var servesSeveralInstances: Bool { true }
    /// How many saves have started.
    let started = Locked(0)
    private let gate = Gate()
    private let revision = Atomic<Int64>(0)
    /// The values the storage stored in the end.
    let stored = Locked<[String]>([])

    func loadRevision(_ id: String) async throws -> (saved: SavedState, revision: Int64)? { nil }
    func load(_ id: String) async throws -> SavedState? { nil }
    func save(_ data: Data, version: Int, for id: String) async throws {}
    func park(_ id: String, reason: String) async throws -> String { "nowhere" }
    func watch(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch { StoreWatch {} }
    func commit(_ rows: [StateRow], events: [OutboxEvent], completing: DeliveryCompletion?) async throws
        -> StateCommit
    {
        for row in rows { _ = try await save(row.data, version: row.version, for: row.id, replacing: row.revision) }
        return .committed([:])
    }

    func save(_ data: Data, version: Int, for id: String, replacing: Int64?) async throws -> StateSave {
        started.withLock { $0 += 1 }
        await gate.wait()
        stored.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
        return .saved(revision: revision.add(1, ordering: .relaxed).newValue)
    }

    func decisions() async throws -> [Entitlement: Bool] { [:] }
    func decide(_ entitlement: Entitlement, granted: Bool) async throws {}
    func watch(_ onChange: @escaping @Sendable () -> Void) -> StoreWatch { StoreWatch {} }

    /// Answers every save held, and every later one at once.
    func letGo() { gate.open() }
}

extension StateKey where Value == String {
    static let sharedNote = StateKey("com.app.shared-note", initial: "none", persistence: .database)
}

/// Waits until `condition` holds, yielding between looks (no time passes on any clock).
func eventually(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}

@Suite(.timeLimit(.minutes(1))) struct StorageOutageTests {
    /// A module that shows the shared note on the dashboard.
    static let noteModule = serviceModule("com.app.note") { module in
        module.reads(.sharedNote)
        module.contribute(to: .dashboard, id: "note", title: "Note") { (context: ActivationContext) in
            Panel(.text(context.state[.sharedNote]))
        }
    }

    /// A booted kernel with the note module, keeping persisted state in `store`, with a 5 s storage time limit.
    static func boot(on store: UnansweringStore, clock: ManualClock) async throws -> Kernel {
        var options = KernelOptions(storageTimeLimit: .seconds(5), clock: clock)
        options.externalStorage = ExternalStorage(
            state: store, policy: store, events: MemoryEventStore(clock: KernelClock(clock)),
            description: "storage that answers when the test says")
        let kernel = makeKernel([noteModule], options: options)
        try await kernel.boot()
        return kernel
    }

    @Test(
        "with storage that never answers, 100 writers of a key wait, then fail at their deadline with `unavailable`, while reads, renders and other keys' writes complete"
    )
    func storageThatNeverAnswers() async throws {
        let clock = ManualClock()
        let store = UnansweringStore()
        let kernel = try await Self.boot(on: store, clock: clock)

        let writers = (0..<100).map { index in
            Task { try await kernel.sharedState.set(.sharedNote, to: "note \(index)") }
        }
        // One write is at the storage (waiting for it, with its deadline); the other 99 wait for the key's lane.
        // Only timers due by then count: boot set the stranded-handler sweep's, an hour away.
        await clock.sleepers(reaching: 100, dueWithin: .seconds(5))
        // The storage call runs in a task of its own, which may reach the storage after its timer is set.
        await eventually { store.started.withLock { $0 } > 0 }
        #expect(store.started.withLock { $0 } == 1)
        // None of these waits for the stalled writes.
        #expect(kernel.sharedState[.sharedNote] == "none")
        try await kernel.sharedState.set(.counter, to: 7)
        #expect(kernel.sharedState[.counter] == 7)
        let panel = try await kernel.contributions(for: .dashboard)[0].content()
        #expect(panel == Panel(.text("none")))

        clock.advance(by: .seconds(5))
        for writer in writers {
            let error = await #expect(throws: StateError.self) { try await writer.value }
            #expect(error?.code == .unavailable, "\(String(describing: error))")
        }
        #expect(store.started.withLock { $0 } == 1, "a writer given up on never reaches the storage")

        // The storage answers late: what it stored is the key's value, and the next write goes through.
        store.letGo()
        await eventually { kernel.sharedState[.sharedNote] != "none" }
        #expect(store.stored.withLock { $0 }.count == 1)
        try await kernel.sharedState.set(.sharedNote, to: "later")
        #expect(kernel.sharedState[.sharedNote] == "later")
        await kernel.shutdown()
    }

    @Test("a writer cancelled while it waits for its key's lane gives up at once; the writes around it land in order")
    func cancelledWriter() async throws {
        let clock = ManualClock()
        let store = UnansweringStore()
        let kernel = try await Self.boot(on: store, clock: clock)
        let first = Task { try await kernel.sharedState.set(.sharedNote, to: "first") }
        // Only the writes' timers count, not the stranded-handler sweep's (an hour away) that boot set.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(5))
        let second = Task { try await kernel.sharedState.set(.sharedNote, to: "second") }
        await clock.sleepers(reaching: 2, dueWithin: .seconds(5))
        let third = Task { try await kernel.sharedState.set(.sharedNote, to: "third") }
        await clock.sleepers(reaching: 3, dueWithin: .seconds(5))
        second.cancel()
        let error = await #expect(throws: StateError.self) { try await second.value }
        #expect(error?.code == .unavailable && error?.message.contains("cancelled") == true)
        store.letGo()
        try await first.value
        try await third.value
        #expect(store.stored.withLock { $0 } == ["\"first\"", "\"third\""])
        #expect(kernel.sharedState[.sharedNote] == "third")
        await kernel.shutdown()
    }

    @Test(
        "with the state database locked by another process, writers fail at their deadline while reads and other keys' writes complete; the stalled write lands once the lock goes"
    )
    func lockedDatabase() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let kernel = makeKernel(
            [],
            options: KernelOptions(
                stateDirectory: directory, stateDatabaseBusyTimeLimit: .seconds(60),
                storageTimeLimit: .seconds(5), clock: clock))
        try await kernel.boot()
        try await kernel.sharedState.set(.storedPreferences, to: Preferences(city: "Oslo", units: "metric"))
        // Another process takes the database's write lock and keeps it.
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: directory + "/state.sqlite", configuration: holding)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }

        let writers = (0..<20).map { index in
            Task {
                try await kernel.sharedState.set(.storedPreferences, to: Preferences(city: "City \(index)", units: ""))
            }
        }
        // Every writer's timer (not the stranded-handler sweep's, an hour away), so every deadline is 5 s.
        await clock.sleepers(reaching: 20, dueWithin: .seconds(5))
        #expect(kernel.sharedState[.storedPreferences].city == "Oslo")
        try await kernel.sharedState.set(.counter, to: 3)
        #expect(kernel.sharedState[.counter] == 3)
        clock.advance(by: .seconds(5))
        for writer in writers {
            let error = await #expect(throws: StateError.self) { try await writer.value }
            #expect(error?.code == .unavailable)
        }
        // The lock goes: the one write that reached the database lands, and is the key's value.
        try holder.inDatabase { db in try db.execute(sql: "COMMIT") }
        await eventually { kernel.sharedState[.storedPreferences].city != "Oslo" }
        let landed = kernel.sharedState[.storedPreferences].city
        #expect(landed.hasPrefix("City "))
        await kernel.shutdown()
        let reopened = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await reopened.boot()
        await reopened.sharedState.load(.storedPreferences)
        #expect(reopened.sharedState[.storedPreferences].city == landed)
        await reopened.shutdown()
    }
}
