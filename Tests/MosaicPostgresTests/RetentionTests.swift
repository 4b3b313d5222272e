import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Testing

@testable import MosaicPostgres

@Suite(.serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason))
struct PostgresRetentionTests {
    /// Runs each statement in the test's database, as the superuser.
    static func run(_ statements: [String], in url: String, on server: TestServer) async throws {
        for statement in statements { try await server.execute(statement, in: PostgresSharedStateTests.name(of: url)) }
    }

    static func count(_ table: String, in url: String, on server: TestServer) async throws -> Int {
        let rows = try await server.execute(
            "SELECT count(*)::int FROM \(table)", in: PostgresSharedStateTests.name(of: url))
        return try rows.first?.decode(Int.self) ?? -1
    }

    @Test("what is done and older than the retention is deleted; what is recent, parked or abandoned stays")
    func pruning() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let backend = try await PostgresBackend.connect(
            url: url, queryTimeLimit: .seconds(30), prunes: false, timer: PostgresConnections.eventLoopTimer,
            logger: Logger(label: "test"))
        let old = "now() - interval '2 days'"
        try await Self.run(
            [
                "INSERT INTO mosaic_event (id, event_type, payload, sender, published_at) VALUES "
                    + "('00000000-0000-0000-0000-000000000001', 'order', '{}', 'com.test.shop', \(old)), "
                    + "('00000000-0000-0000-0000-000000000002', 'order', '{}', 'com.test.shop', now()), "
                    + "('00000000-0000-0000-0000-000000000003', 'order', '{}', 'com.test.shop', \(old)), "
                    + "('00000000-0000-0000-0000-000000000004', 'order', '{}', 'com.test.shop', \(old)), "
                    + "('00000000-0000-0000-0000-000000000005', 'order', '{}', 'com.test.shop', \(old))",
                // 1: done long ago (goes, and its event); 2: done just now (stays); 3: parked (stays); 4: no
                // delivery at all, published long ago (goes); 5: done long ago for one handler, abandoned for
                // another (the done one goes, the event stays for the abandoned one).
                "INSERT INTO mosaic_delivery (event_id, subscriber, state, completed_at) VALUES "
                    + "('00000000-0000-0000-0000-000000000001', 'mail', 'done', \(old)), "
                    + "('00000000-0000-0000-0000-000000000002', 'mail', 'done', now()), "
                    + "('00000000-0000-0000-0000-000000000003', 'mail', 'parked', NULL), "
                    + "('00000000-0000-0000-0000-000000000005', 'mail', 'done', \(old)), "
                    + "('00000000-0000-0000-0000-000000000005', 'book', 'abandoned', NULL)",
                "INSERT INTO mosaic_state_unreadable (id, value, version, reason, kept_at) VALUES "
                    + "('com.test.old', '1', 1, 'test', \(old)), ('com.test.new', '1', 1, 'test', now())",
            ], in: url, on: server)

        let pruned = try await backend.retention.prune()
        #expect(pruned == PostgresRetention.Pruned(deliveries: 2, events: 2, unreadableStates: 1))
        let events = try await server.execute(
            "SELECT id::text FROM mosaic_event ORDER BY id", in: PostgresSharedStateTests.name(of: url))
        #expect(
            try events.map { try $0.decode(String.self) } == [
                "00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003",
                "00000000-0000-0000-0000-000000000005",
            ])
        #expect(try await Self.count("mosaic_delivery", in: url, on: server) == 3)
        let kept = try await server.execute(
            "SELECT id FROM mosaic_state_unreadable", in: PostgresSharedStateTests.name(of: url))
        #expect(try kept.map { try $0.decode(String.self) } == ["com.test.new"])
        #expect(try await backend.retention.prune() == PostgresRetention.Pruned())
        await backend.close()
    }

    @Test("an instance prunes only while no other does: it skips the pass when the lock is held")
    func oneAtATime() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let backend = try await PostgresBackend.connect(
            url: url, queryTimeLimit: .seconds(30), prunes: false, timer: PostgresConnections.eventLoopTimer,
            logger: Logger(label: "test"))
        let other = try await backend.connections.connect().get()
        _ = try await other.query(
            "SELECT pg_advisory_lock(\(PostgresRetention.lockKey))", logger: Logger(label: "test")
        ).get()
        #expect(try await backend.retention.prune() == nil)
        // Released by its holder, answered before the next pass. (Closing the connection instead let the pass race
        // the server's backend, which frees a session's locks only as it exits: CI failed once on it.)
        _ = try await other.query(
            "SELECT pg_advisory_unlock(\(PostgresRetention.lockKey))", logger: Logger(label: "test")
        ).get()
        #expect(try await backend.retention.prune() != nil)
        try await other.close()
        await backend.close()
    }

    @Test(
        "a pass commits batch by batch: stopped after its first batch, what that batch deleted stays deleted, and the next pass deletes the rest"
    )
    func batchByBatch() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let backend = try await PostgresBackend.connect(
            url: url, queryTimeLimit: .seconds(30), prunes: false, timer: PostgresConnections.eventLoopTimer,
            logger: Logger(label: "test"))
        let ids = (1...5).map { "'00000000-0000-0000-0000-00000000000\($0)'" }
        try await Self.run(
            [
                "INSERT INTO mosaic_event (id, event_type, payload, sender, published_at) VALUES "
                    + ids.map { "(\($0), 'order', '{}', 'com.test.shop', now() - interval '2 days')" }
                    .joined(separator: ", "),
                "INSERT INTO mosaic_delivery (event_id, subscriber, state, completed_at) VALUES "
                    + ids.map { "(\($0), 'mail', 'done', now() - interval '2 days')" }.joined(separator: ", "),
            ], in: url, on: server)

        // The pass's task is cancelled (as closing the backend does) once its first batch of two has committed.
        let stopping = PostgresRetention(
            connections: backend.connections, retention: .seconds(86_400), batch: 2,
            committed: { withUnsafeCurrentTask { $0?.cancel() } })
        let stopped = try await Task { try await stopping.prune() }.value
        #expect(stopped == PostgresRetention.Pruned(deliveries: 2))
        #expect(try await Self.count("mosaic_delivery", in: url, on: server) == 3)

        let next = PostgresRetention(connections: backend.connections, retention: .seconds(86_400), batch: 2)
        #expect(try await next.prune() == PostgresRetention.Pruned(deliveries: 3, events: 5))
        #expect(try await Self.count("mosaic_event", in: url, on: server) == 0)
        await backend.close()
    }
}
