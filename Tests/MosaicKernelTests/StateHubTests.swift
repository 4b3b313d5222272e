import Foundation
import GRDB
import Mosaic
import Synchronization
import Testing

@testable import MosaicKernel

/// A persister whose saves wait until the test lets them go, announcing each one as it starts.
final class HeldPersister: StatePersister {
    let started = AsyncStream.makeStream(of: String.self)
    private let release = DispatchSemaphore(value: 0)

    func load<Value: Decodable>(_ type: Value.Type, for id: String) -> (value: Value?, problem: Diagnostic?) {
        (nil, nil)
    }

    func save<Value: Encodable>(_ value: Value, for id: String) throws {
        started.continuation.yield(id)
        release.wait()
    }

    func letGo() { release.signal() }
}

@Suite(.timeLimit(.minutes(1))) struct StateHubTests {
    @Test("a write's disk I/O does not block readers and writers of other keys, nor readers of its own key")
    func ioOutsideTheReadLock() async throws {
        let persister = HeldPersister()
        let hub = StateHub(directory: nil, persister: persister)
        let saved = StateKey("com.app.saved", initial: 0, persistence: .jsonFile)
        let writing = Task.detached { try hub.write(saved, as: StateHub.host) { $0 = 1 } }
        for await id in persister.started.stream where id == "com.app.saved" { break }
        // The save is under way and held: none of these may wait for it.
        #expect(hub.read(.counter) == 0)
        try hub.write(.counter, as: StateHub.host) { $0 = 5 }
        #expect(hub.read(.counter) == 5)
        #expect(hub.read(saved) == 0, "the value is published once it is saved")
        persister.letGo()
        try await writing.value
        #expect(hub.read(saved) == 1)
    }

    @Test("the state database runs in WAL mode")
    func writeAheadLog() async throws {
        let directory = try temporaryDirectory()
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await kernel.boot()
        try kernel.sharedState.set(.storedPreferences, to: Preferences(city: "Oslo", units: "metric"))
        #expect(FileManager.default.fileExists(atPath: directory + "/state.sqlite-wal"))
        await kernel.shutdown()
    }

    @Test("a write to a database another connection holds locked waits for the lock, then succeeds")
    func busyTimeout() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The write announces that it met the lock, then waits (as SQLite's busy timeout does) until the test lets
        // the lock go: no time passes in the test, and the write cannot finish while the lock is held.
        let (busy, announce) = AsyncStream.makeStream(of: Void.self)
        let lockReleased = DispatchSemaphore(value: 0)
        let database = try StateDatabase(
            directory: directory,
            busyMode: .callback { _ in
                announce.yield()
                lockReleased.wait()
                return true
            })
        let impatient = try StateDatabase(directory: directory, busyTimeout: .zero)
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true  // the lock stays held between the two accesses below
        let holder = try DatabaseQueue(path: directory + "/state.sqlite", configuration: holding)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        // Without waiting, a write fails at once: what a busy timeout of zero shows, and what happened before.
        #expect(throws: (any Error).self) { try impatient.save(1, for: "com.app.count") }
        // The save blocks its thread while it waits: a thread of its own, not one of the few the tests share.
        let saved = Atomic(false)
        let (outcome, finish) = AsyncStream.makeStream(of: (any Error)?.self)
        Thread.detachNewThread {
            do {
                try database.save(2, for: "com.app.count")
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
        #expect(database.load(Int.self, for: "com.app.count").value == 2)
    }
}
