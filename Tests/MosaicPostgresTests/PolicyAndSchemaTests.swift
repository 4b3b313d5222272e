import Foundation
import Logging
import Mosaic
import MosaicKernel
import MosaicTesting
import PostgresNIO
import Testing

@testable import MosaicPostgres

@Suite(.serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason))
struct PostgresPolicyTests {
    @Test func aRevokeOnOneInstanceStopsTheModuleOnEvery() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url)
        #expect(await b.kernel.state(of: "com.test.weather") == .active)
        let changes = b.kernel.stateChanges()
        try await a.kernel.revoke("weather")
        let stopped = await first(changes) { $0.id == "com.test.weather" && $0.to != .active }
        #expect(stopped != nil)
        #expect(await b.kernel.grantedEntitlements.contains("weather") == false)
        // A new instance boots with the policy as the others left it, whatever its own default.
        let c = try await Instance.boot(url, granted: ["weather"])
        #expect(await c.kernel.state(of: "com.test.weather") != .active)
        let back = c.kernel.stateChanges()
        try await b.kernel.grant("weather")
        #expect(await first(back) { $0.id == "com.test.weather" && $0.to == .active } != nil)
        for instance in [a, b, c] { await instance.stop() }
    }

    @Test func schemaCreationIsSafeWhenInstancesStartTogether() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let backends = try await withThrowingTaskGroup(of: PostgresBackend.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresBackend.connect(url: url) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(backends.count == 4)
        let rows = try await server.execute(
            "SELECT version FROM mosaic_schema", in: PostgresSharedStateTests.name(of: url))
        #expect(try rows.map { try $0.decode(Int.self) } == [PostgresSchema.steps.count])
        for backend in backends { await backend.close() }
    }

    @Test func anUnreachableDatabaseIsAnErrorThatNamesTheFix() async throws {
        let server = try TestServer.running()
        await #expect {
            _ = try await PostgresBackend.connect(url: server.url(of: "no_such_database"))
        } throws: { error in
            (error as? PostgresBackendError)?.code == .unreachable && "\(error)".contains("Check that the server runs")
        }
    }
}

@Suite(.serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason))
struct PostgresTimeoutTests {
    @Test func aQueryWithoutAnAnswerFailsAfterTheTimeoutAndTheNextQueryConnectsAgain() async throws {
        let url = try await TestServer.running().makeDatabase()
        // The test decides when time is up: each query's time limit sleeps on a manual clock, which only the test
        // moves, whatever the machine's load.
        let clock = ManualClock()
        // No heartbeat and no pruning during the test: their queries' limits would sleep on the clock too.
        let backend = try await PostgresBackend.connect(
            url: url, queryTimeLimit: .milliseconds(300), heartbeat: .seconds(3_600), prunes: false,
            timer: clock.queryTimer, logger: Logger(label: "test"))
        // A server that does not answer, as a dropped connection would look: the query sleeps far past the limit.
        let hanging = Task { try await backend.connections.run("SELECT pg_sleep(30)") }
        await clock.sleepers(reaching: 1)
        clock.advance(by: .milliseconds(300))
        let error = await #expect(throws: PostgresBackendError.self) { try await hanging.value }
        #expect(error?.message.contains("did not answer within 0.3 seconds, so the connection was closed") == true)
        #expect(error?.code == .timedOut)
        let rows = try await backend.connections.run("SELECT 1")
        #expect(try rows.first?.decode(Int.self) == 1)
        await backend.close()
    }
}

extension PostgresTimeoutTests {
    @Test(
        "a migration waiting on a schema lock that is never released fails the connect after the statement limit",
        .timeLimit(.minutes(1)))
    func aMigrationBehindAHeldLockTimesOut() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let name = PostgresSharedStateTests.name(of: url)
        // Another instance whose migration hangs holding the lock, as a stopped server process would.
        let holder = try await server.connect(to: name)
        let logger = Logger(label: "test")
        _ = try await holder.query("SELECT pg_advisory_lock(\(PostgresSchema.lockKey))", logger: logger).get()
        // The test decides when a limit is reached: the timer hands it each long limit's expiry (the lock's wait and
        // the steps have one; the login and the other statements a short one, which never expires here).
        let (longLimits, expiries) = AsyncStream.makeStream(of: (Duration, @Sendable () -> Void).self)
        let timer: PostgresConnections.QueryTimer = { _, timeout, expire in
            if timeout > .seconds(10) { expiries.yield((timeout, expire)) }
            return {}
        }
        let connecting = Task {
            try await PostgresBackend.connect(
                url: url, queryTimeLimit: .milliseconds(300), heartbeat: .seconds(3_600), prunes: false, timer: timer,
                logger: logger)
        }
        // The first long limit is the lock's, armed as its statement is sent: the migration now waits on the lock.
        var limits = longLimits.makeAsyncIterator()
        let (limit, expire) = try #require(await limits.next())
        // A migration's statement has longer than a query (an index on a large table takes minutes).
        #expect(limit == PostgresSchema.statementLimit)
        expire()
        let error = await #expect(throws: PostgresBackendError.self) { try await connecting.value }
        #expect(error?.code == .timedOut)
        // Once the lock is free, the same database takes the app.
        _ = try await holder.query("SELECT pg_advisory_unlock_all()", logger: logger).get()
        try await holder.close()
        let backend = try await PostgresBackend.connect(url: url, heartbeat: .seconds(3_600))
        await backend.close()
    }
}

extension ManualClock {
    /// A query timer on this clock: a query expires when the clock reaches its limit, unless it answered first.
    var queryTimer: PostgresConnections.QueryTimer {
        { [self] _, timeout, expire in
            let limit = Task {
                guard (try? await sleep(for: timeout)) != nil else { return }
                expire()
            }
            return { limit.cancel() }
        }
    }
}
