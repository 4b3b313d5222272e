import Foundation
import Mosaic
import MosaicKernel
import PostgresNIO
import Testing

@testable import MosaicPostgres

@Suite(.serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason))
struct PostgresSharedStateTests {
    @Test func aWriteOnOneInstanceReachesTheOthersObservers() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url)
        let seen = b.kernel.sharedState.values(of: .city)
        try await a.kernel.sharedState.set(.city, to: "Oslo")
        #expect(await first(seen) { $0 == "Oslo" } == "Oslo")
        #expect(b.kernel.sharedState[.city] == "Oslo")
        // A key persisted as a file lives in the database too: a file on one instance's disk reaches no other.
        let notes = a.kernel.sharedState.values(of: .note)
        try await b.kernel.sharedState.set(.note, to: "from b")
        #expect(await first(notes) { $0 == "from b" } == "from b")
        await a.stop()
        await b.stop()
        // A new instance reads what the others left.
        let c = try await Instance.boot(url)
        await c.kernel.sharedState.load(.city)
        #expect(c.kernel.sharedState[.city] == "Oslo")
        await c.stop()
    }

    @Test func concurrentUpdatesOnTwoInstancesLoseNoWrite() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url)
        let perInstance = 40
        await withTaskGroup(of: Void.self) { group in
            for instance in [a, b] {
                group.addTask {
                    for _ in 0..<perInstance {
                        // A write that loses every compare-and-set race is refused whole, never half-applied;
                        // writing it again, as its error says, is the caller's part.
                        while await (try? instance.kernel.sharedState.update(.counter) { $0 += 1 }) == nil {}
                    }
                }
            }
        }
        let total = 2 * perInstance
        for instance in [a, b] {
            #expect(await first(instance.kernel.sharedState.values(of: .counter)) { $0 == total } == total)
        }
        let rows = try await TestServer.running().execute(
            "SELECT value FROM mosaic_state WHERE id = 'com.test.counter'", in: Self.name(of: url))
        #expect(try rows.first?.decode(String.self) == "\(total)")
        await a.stop()
        await b.stop()
    }

    @Test func anEditByHandReachesEveryInstance() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let a = try await Instance.boot(url)
        try await a.kernel.sharedState.set(.city, to: "Lisbon")
        let seen = a.kernel.sharedState.values(of: .city)
        try await server.execute(
            "UPDATE mosaic_state SET value = '\"Tokyo\"' WHERE id = 'com.test.city'", in: Self.name(of: url))
        #expect(await first(seen) { $0 == "Tokyo" } == "Tokyo")
        await a.stop()
    }

    @Test func observersCatchUpAfterTheListeningConnectionDrops() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url)
        let seen = b.kernel.sharedState.values(of: .city)
        #expect(await first(seen) { _ in true } == "Chicago")
        // Cut every listening connection; a change made while they reconnect is never notified, so B must read
        // again what it holds once it is back.
        try await server.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'",
            in: Self.name(of: url))
        try await a.kernel.sharedState.set(.city, to: "New York")
        #expect(await first(seen) { $0 == "New York" } == "New York")
        await a.stop()
        await b.stop()
    }

    @Test func aMigratedKeyReadsTheOldValue() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let old = try await Instance.boot(url)
        try await old.kernel.sharedState.set(.counter, to: 41)
        await old.stop()
        let counted = StateKey<Tally>(
            "com.test.counter", initial: Tally(count: 0), persistence: .database, version: 2,
            migrations: [.from(1, as: Int.self) { Tally(count: $0) }])
        let new = try await Instance.boot(url)
        await new.kernel.sharedState.load(counted)
        #expect(new.kernel.sharedState[counted] == Tally(count: 41))
        let rows = try await server.execute(
            "SELECT version FROM mosaic_state WHERE id = 'com.test.counter'", in: Self.name(of: url))
        #expect(try rows.first?.decode(Int.self) == 2)
        await new.stop()
    }

    @Test func anOlderInstanceLeavesTheRowOfANewerOneAsItIs() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let counted = StateKey<Tally>(
            "com.test.counter", initial: Tally(count: 0), persistence: .database, version: 2,
            migrations: [.from(1, as: Int.self) { Tally(count: $0) }])
        let new = try await Instance.boot(url)
        try await new.kernel.sharedState.set(counted, to: Tally(count: 7))
        // An instance of the release before (the key at version 1) boots during a rolling deploy.
        let old = try await Instance.boot(url)
        await old.kernel.sharedState.load(.counter)
        #expect(old.kernel.sharedState[.counter] == 0)
        await #expect(throws: StateError.self) { try await old.kernel.sharedState.set(.counter, to: 1) }
        let rows = try await server.execute(
            "SELECT version FROM mosaic_state WHERE id = 'com.test.counter'", in: Self.name(of: url))
        #expect(try rows.first?.decode(Int.self) == 2)
        let parked = try await server.execute("SELECT id FROM mosaic_state_unreadable", in: Self.name(of: url))
        #expect(parked.isEmpty)
        await old.stop()
        await new.stop()
    }

    @Test func writesStoredTogetherEachGetTheirOwnOutcomeInOneTransaction() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let database = try await PostgresBackend.connect(url: url)
        let state = database.storage.state
        let json = { (text: String) in Data("\"\(text)\"".utf8) }
        guard case .saved(let kept) = try await state.save(json("one"), version: 1, for: "kept", replacing: nil),
            case .saved(let stale) = try await state.save(json("one"), version: 1, for: "stale", replacing: nil),
            case .saved(let taken) = try await state.save(json("first"), version: 1, for: "taken", replacing: nil),
            case .saved(let now) = try await state.save(json("two"), version: 1, for: "stale", replacing: stale)
        else {
            Issue.record("the rows to start from were not written")
            return
        }
        let outcomes = try await PostgresStateStore.save(
            [
                StateRow(id: "kept", data: json("changed"), version: 1, revision: kept),
                StateRow(id: "new", data: json("new"), version: 2, revision: nil),
                StateRow(id: "stale", data: json("lost"), version: 1, revision: stale),
                StateRow(id: "taken", data: json("second"), version: 1, revision: nil),
            ], on: database.connections)
        #expect(outcomes.count == 4)
        guard case .saved = outcomes[0], case .saved = outcomes[1] else {
            Issue.record("the rows still at their writers' revisions were not saved: \(outcomes)")
            return
        }
        // The others lost their races, and read the rows as they are now.
        #expect(outcomes[2] == .conflict(current: SavedState(data: json("two"), version: 1), revision: now))
        #expect(outcomes[3] == .conflict(current: SavedState(data: json("first"), version: 1), revision: taken))
        let rows = try await server.execute(
            "SELECT id, value, xmin::text FROM mosaic_state ORDER BY id", in: Self.name(of: url))
        let stored = try rows.map { try $0.decode((String, String, String).self) }
        #expect(stored.map(\.0) == ["kept", "new", "stale", "taken"])
        #expect(stored.map(\.1) == [#""changed""#, #""new""#, #""two""#, #""first""#])
        // One transaction wrote both saved rows.
        #expect(stored[0].2 == stored[1].2)
        await database.close()
    }

    @Test func sixteenWritersOnDistinctKeysAllLand() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<16 {
                group.addTask {
                    let key = StateKey<Int>("com.test.writer\(writer)", initial: 0, persistence: .database)
                    for _ in 0..<10 { try await a.kernel.sharedState.update(key) { $0 += 1 } }
                }
            }
            try await group.waitForAll()
        }
        for writer in 0..<16 {
            let key = StateKey<Int>("com.test.writer\(writer)", initial: 0, persistence: .database)
            #expect(await first(b.kernel.sharedState.values(of: key)) { $0 == 10 } == 10)
        }
        await a.stop()
        await b.stop()
    }

    static func name(of url: String) -> String {
        String(URLComponents(string: url)?.path.dropFirst() ?? "")
    }
}
