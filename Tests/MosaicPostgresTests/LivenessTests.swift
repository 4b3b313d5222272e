import Foundation
import Logging
import Mosaic
import MosaicKernel
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization
import Testing

@testable import MosaicPostgres

#if canImport(Glibc)
    import Glibc
#endif

/// A connection that goes silent without closing (its server process stopped) is noticed by the heartbeat and
/// replaced, and the readiness checks say how storage stands. Each test's time limit only ends a test that would
/// otherwise wait forever for a change that never arrives; nothing here is timed.
@Suite(
    .serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason), .timeLimit(.minutes(2)))
struct PostgresLivenessTests {
    @Test("a query whose answer never comes fails at its deadline, even when closing its connection does not end it")
    func deadlineWithoutAnswer() async throws {
        let url = try await TestServer.running().makeDatabase()
        let connections = PostgresConnections(url: try PostgresURL(url), logger: Logger(label: "test"))
        // A heartbeat sent as its connection went silent was seen never to end after the close, and the listener
        // waited for it for good (Scripts/faults.py: an instance not ready again after PostgreSQL restarted).
        let never = connections.group.next().makePromise(of: Int.self)
        let closed = Atomic(false)
        let outcome = connections.settle(
            never.futureResult, within: .milliseconds(50), expired: PostgresBackendError(.timedOut, "no answer")
        ) { closed.store(true, ordering: .relaxed) }
        await #expect(throws: PostgresBackendError.self) { try await outcome.get() }
        let didClose = closed.load(ordering: .relaxed)
        #expect(didClose, "the deadline closes what the query waits on")
        never.succeed(1)  // an answer after the deadline changes nothing
        await connections.close()
    }

    @Test("the listening connection's socket has TCP keepalive: an idle server is probed after 10 s, every 5 s")
    func keepalive() async throws {
        let url = try await TestServer.running().makeDatabase()
        let database = try await PostgresBackend.connect(url: url)
        let configuration = database.url.configuration
        let channel = try await PostgresConnections.keepalive(on: database.connections.group.next())
            .connect(host: try #require(configuration.host), port: try #require(configuration.port)).get()
        #expect(try await channel.getOption(.socketOption(.so_keepalive)).get() != 0)
        #expect(try await channel.getOption(.tcpOption(.init(rawValue: CInt(TCP_KEEPIDLE)))).get() == 10)
        #expect(try await channel.getOption(.tcpOption(.init(rawValue: CInt(TCP_KEEPINTVL)))).get() == 5)
        try await channel.close()
        await database.close()
    }

    @Test("a listening connection gone silent is replaced, and the revoke another instance made meanwhile applies")
    func silentListener() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url, heartbeat: .milliseconds(200))
        let backend = try #require(b.database.listener.backend)
        let changes = b.kernel.stateChanges()
        kill(backend, SIGSTOP)
        do {
            try await a.kernel.revoke("weather")
        } catch {
            kill(backend, SIGCONT)
            throw error
        }
        let stopped = await first(changes) { $0.id == "com.test.weather" && $0.to != .active }
        kill(backend, SIGCONT)
        #expect(stopped != nil)
        #expect(await b.kernel.grantedEntitlements.contains("weather") == false)
        #expect(b.database.listener.backend != backend)
        for instance in [a, b] { await instance.stop() }
    }

    @Test("a statement the server refused to prepare (a lock held past lock_timeout) runs again once the lock is gone")
    func aRefusedPreparationIsNotKept() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let name = PostgresSharedStateTests.name(of: url)
        try await server.execute("ALTER DATABASE \(name) SET lock_timeout = '200ms'", in: name)
        let database = try await PostgresBackend.connect(url: url)
        let connections = database.connections
        // Preparing a statement locks its tables (as a migration might hold them). postgres-nio keeps a failed
        // preparation's error for its connection's life and answers it to every later run, unsent.
        let holder = try await server.connect(to: name)
        _ = try await holder.query("BEGIN", logger: connections.logger).get()
        _ = try await holder.query("LOCK TABLE mosaic_state IN ACCESS EXCLUSIVE MODE", logger: connections.logger).get()
        // As many at once as the pool has connections, so that every one of them tries to prepare.
        let refused = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<PostgresConnections.maximumPooledConnections {
                group.addTask { (try? await connections.run(PostgresStateStore.Read(ids: ["a"]))) == nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        _ = try await holder.query("COMMIT", logger: connections.logger).get()
        try await holder.close()
        #expect(refused == PostgresConnections.maximumPooledConnections)
        for _ in 0..<PostgresConnections.maximumPooledConnections {
            #expect(try await connections.run(PostgresStateStore.Read(ids: ["a"])).isEmpty)
        }
        await database.close()
    }

    @Test("a server that answers every write with 'read-only' (a standby) fails readiness, until it takes writes again")
    func aServerTakingNoWritesFailsReadiness() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let name = PostgresSharedStateTests.name(of: url)
        // No heartbeat during the test: only its own probes run.
        let database = try await PostgresBackend.connect(url: url, heartbeat: .seconds(3_600))
        let listener = database.listener
        #expect(await listener.probe())
        // A standby's answer to a write, on the connections the pool already holds: the probe records this instance
        // as seen, a write.
        try await server.execute(
            """
            CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'cannot execute UPDATE in a read-only transaction' USING ERRCODE = '25006'; END $$
            """, in: name)
        try await server.execute(
            "CREATE TRIGGER refuse_writes BEFORE INSERT OR UPDATE ON mosaic_instance FOR EACH ROW "
                + "EXECUTE FUNCTION refuse_writes()", in: name)
        #expect(await listener.probe() == false)
        let refused = try #require(listener.checks().first { $0.name == "external storage" })
        #expect(!refused.passing && refused.detail.contains("25006"), "\(refused.detail)")
        // A standby still answers reads: one that succeeds does not make storage pass while writes fail, nor does the
        // admin page say storage passed when it answered.
        let read = ContinuousClock.now
        _ = try await database.connections.run("SELECT 1")
        let checked = ContinuousClock.now
        let failing = try #require(listener.checks().first { $0.name == "external storage" })
        #expect(failing.passing == false)
        #expect(checked - (failing.sincePassed ?? .zero) < read, "it last passed before the read, not at it")
        try await server.execute("DROP TRIGGER refuse_writes ON mosaic_instance", in: name)
        #expect(await listener.probe())
        #expect(try #require(listener.checks().first { $0.name == "external storage" }).passing)
        await database.close()
    }

    @Test("a cancelled task's queries and transactions still reach the server, and storage is not reported down")
    func aCancelledCallerStillQueries() async throws {
        let url = try await TestServer.running().makeDatabase()
        let database = try await PostgresBackend.connect(url: url)
        let connections = database.connections
        // As the kernel's last writes run when a module or the instance stops: handing back claimed deliveries.
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let rows = try await connections.run("SELECT 1").count
            let inTransaction = try await connections.transaction { connection in
                try await connection.query("SELECT 2", logger: connections.logger).get().rows.count
            }
            return rows + inTransaction
        }.result
        #expect(try outcome.get() == 2)
        #expect(connections.answers().lastFailure == nil)
        await database.close()
    }

    @Test("a changed row that cannot be read when its notification arrives is read at the next heartbeat")
    func anUnreadChangeIsReadAgain() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let name = PostgresSharedStateTests.name(of: url)
        try await server.execute("ALTER DATABASE \(name) SET lock_timeout = '100ms'", in: name)
        let database = try await PostgresBackend.connect(url: url, heartbeat: .milliseconds(200))
        let logger = database.connections.logger
        try await server.execute("INSERT INTO mosaic_state (id, value, version) VALUES ('k', '\"a\"', 1)", in: name)
        let changes = Locked<[StoredStateChange]>([])
        let watch = database.listener.watchState { change in changes.withLock { $0.append(change) } }
        var events = database.listener.events.stream.makeAsyncIterator()

        // The row changes without a notification (triggers off), and stays locked while one is sent by hand, so
        // that the read the notification starts waits out lock_timeout and fails.
        let holder = try await server.connect(to: name)
        _ = try await holder.query("BEGIN", logger: logger).get()
        _ = try await holder.query("SET LOCAL session_replication_role = replica", logger: logger).get()
        let updated = try await holder.query(
            PostgresQuery(
                unsafeSQL: "UPDATE mosaic_state SET value = '\"b\"', revision = nextval('mosaic_state_revision') "
                    + "WHERE id = 'k' RETURNING revision"), logger: logger
        ).get().rows.first?.decode(Int64.self)
        let revision = try #require(updated)
        _ = try await holder.query("LOCK TABLE mosaic_state IN ACCESS EXCLUSIVE MODE", logger: logger).get()
        try await server.execute("SELECT pg_notify('mosaic_state', '\(revision):k')", in: name)
        while let event = await events.next(), event != .unreadChange {}
        _ = try await holder.query("COMMIT", logger: logger).get()
        try await holder.close()

        // A resynchronization would find the change too, but tells watchers to read everything (`.resynchronize`),
        // not the row's new value.
        func read() -> Bool {
            changes.withLock {
                $0.contains {
                    guard case .changed(id: "k", let saved, revision) = $0 else { return false }
                    return saved?.data == Data(#""b""#.utf8)
                }
            }
        }
        var beats = 0
        while !read(), beats < 6, let event = await events.next() {
            if event == .alive { beats += 1 }
        }
        #expect(read(), "after \(beats) heartbeats: \(changes.withLock { $0 })")
        watch.cancel()
        await database.close()
    }

    @Test("while the database does not answer, the storage check fails; once it answers, every check passes")
    func readinessFollowsTheDatabase() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        // A short query limit: a policy read caught by the pause fails soon, and is read again.
        let b = try await Instance.boot(url, heartbeat: .milliseconds(200), queryTimeLimit: .seconds(1))
        let checks = await b.kernel.readinessChecks()
        #expect(checks.map(\.name) == ["external storage", "change feed", "stored policy"])
        #expect(checks.allSatisfy { $0.passing }, "\(checks)")

        let paused = try server.pause()
        // A probe gets no answer now (one under way as the server stopped may still have got one).
        while await b.database.listener.probe() {}
        let during = await b.kernel.readinessChecks()
        server.resume(paused)
        let storage = during.first { $0.name == "external storage" }
        #expect(storage?.passing == false)
        #expect(storage?.detail.contains("Check that the server runs and is reachable") == true)

        // Whatever the pause interrupted (a heartbeat, a policy read) is made good again; each heartbeat and probe
        // wakes the test to look.
        var after: [ReadinessCheck] = []
        for await _ in b.database.listener.events.stream {
            after = await b.kernel.readinessChecks()
            if after.allSatisfy(\.passing) { break }
        }
        #expect(!after.isEmpty && after.allSatisfy { $0.passing }, "\(after)")
        await b.stop()
    }
}
