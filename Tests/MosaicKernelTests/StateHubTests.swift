import Foundation
import GRDB
import Mosaic
import Synchronization
import Testing

@testable import MosaicKernel

/// A store whose saves (and, with `holdsLoads`, loads) wait until the test lets them go, announcing each one
/// as it starts: a storage that does not answer, for as long as the test wants.
final class HeldStateStore: SavedStateStore {
    let started = AsyncStream.makeStream(of: String.self)
    private let holdsLoads: Bool
    private let gate = Gate()
    /// The saves that completed, in order.
    let saved = Locked<[String]>([])

    init(holdsLoads: Bool = false) {
        self.holdsLoads = holdsLoads
    }

    func load(_ id: String) async throws -> SavedState? {
        if holdsLoads { await hold(id) }
        return nil
    }

    func save(_ data: Data, version: Int, for id: String) async throws {
        await hold(id)
        saved.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
    }

    func park(_ id: String, reason: String) async throws -> String { "nowhere" }

    private func hold(_ id: String) async {
        started.continuation.yield(id)
        await gate.wait()
    }

    /// Answers every call held, and every later one at once.
    func letGo() { gate.open() }
}

@Suite(.timeLimit(.minutes(1))) struct StateHubTests {
    @Test("a write's disk I/O does not block readers and writers of other keys, nor readers of its own key")
    func ioOutsideTheReadLock() async throws {
        let store = HeldStateStore()
        let hub = StateHub(store: store)
        let saved = StateKey("com.app.saved", initial: 0, persistence: .database)
        let writing = Task.detached { try await hub.write(saved, as: StateHub.host) { $0 = 1 } }
        for await id in store.started.stream where id == "com.app.saved" { break }
        // The save is under way and held: none of these may wait for it.
        #expect(hub.read(.counter) == 0)
        try await hub.write(.counter, as: StateHub.host) { $0 = 5 }
        #expect(hub.read(.counter) == 5)
        #expect(hub.read(saved) == 0, "the value is published once it is saved")
        store.letGo()
        try await writing.value
        #expect(hub.read(saved) == 1)
    }

    @Test("the state database runs in WAL mode")
    func writeAheadLog() async throws {
        let directory = try temporaryDirectory()
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await kernel.boot()
        try await kernel.sharedState.set(.storedPreferences, to: Preferences(city: "Oslo", units: "metric"))
        #expect(FileManager.default.fileExists(atPath: directory + "/state.sqlite-wal"))
        await kernel.shutdown()
    }

    @Test("saves of sixty-four keys made at once (sharing transactions) each land, with their own value")
    func savesMadeTogether() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = EmbeddedStorage(directory: directory, clock: KernelClock(ContinuousClock()))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for key in 0..<64 {
                group.addTask {
                    let saved = try await database.save(
                        Data("\(key)".utf8), version: 1 + key % 3, for: "key\(key)", replacing: nil)
                    guard case .saved = saved else { throw StateError(.contended, "key\(key): \(saved)") }
                }
            }
            try await group.waitForAll()
        }
        let reopened = EmbeddedStorage(directory: directory, clock: KernelClock(ContinuousClock()))
        for key in 0..<64 {
            #expect(try await reopened.load("key\(key)") == SavedState(data: Data("\(key)".utf8), version: 1 + key % 3))
        }
    }

    @Test("a write to a database another connection holds locked waits for the lock, then succeeds")
    func busyTimeLimit() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The write announces that it met the lock, then waits (as SQLite's busy time limit does) until the test lets
        // the lock go: no time passes in the test, and the write cannot finish while the lock is held.
        let (busy, announce) = AsyncStream.makeStream(of: Void.self)
        let lockReleased = DispatchSemaphore(value: 0)
        let database = EmbeddedStorage(
            directory: directory,
            busyMode: .callback { _ in
                announce.yield()
                lockReleased.wait()
                return true
            }, clock: KernelClock(ContinuousClock()))
        let impatient = EmbeddedStorage(
            directory: directory, busyTimeLimit: .zero, clock: KernelClock(ContinuousClock()))
        // Opened (the tables made) before the lock is taken: only the saves below meet it.
        try await database.open()
        try await impatient.open()
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true  // the lock stays held between the two accesses below
        let holder = try DatabaseQueue(path: directory + "/state.sqlite", configuration: holding)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        // Without waiting, a write fails at once: what a busy time limit of zero shows, and what happened before.
        await #expect(throws: (any Error).self) {
            try await impatient.save(Data("1".utf8), version: 1, for: "com.app.count")
        }
        // The save waits on GRDB's own thread, not one of the cooperative pool's.
        let saved = Atomic(false)
        let (outcome, finish) = AsyncStream.makeStream(of: (any Error)?.self)
        Task {
            do {
                try await database.save(Data("2".utf8), version: 1, for: "com.app.count")
                saved.store(true, ordering: .sequentiallyConsistent)
                finish.yield(nil)
            } catch {
                finish.yield(error)
            }
        }
        var meetings = busy.makeAsyncIterator()
        _ = await meetings.next()
        let finishedEarly = saved.load(ordering: .sequentiallyConsistent)
        #expect(!finishedEarly)
        try holder.inDatabase { db in try db.execute(sql: "COMMIT") }
        lockReleased.signal()
        var results = outcome.makeAsyncIterator()
        let failure = await results.next()
        #expect(failure.map { $0 == nil } == true, "\(String(describing: failure))")
        let loaded = try await database.load("com.app.count")
        #expect(loaded == SavedState(data: Data("2".utf8), version: 1))
    }
}
