internal import Foundation
internal import MosaicKernel
internal import PostgresNIO

/// Persisted state keys in `mosaic_state`: a row per key with its JSON, the key's version when saved, and a
/// revision the database advances on every write. A write replaces only the revision its writer read; rows no code
/// can use are moved to `mosaic_state_unreadable`, never overwritten.
///
/// Writes of different keys that arrive together share one statement, so one commit (``GroupCommit``).
struct PostgresStateStore: TransactionalStateStore, CustomStringConvertible {
    let connections: PostgresConnections
    let listener: PostgresListener
    private let writes: GroupCommit<StateRow, StateSave>

    /// At most this many rows go into one statement; more wait for the next.
    static let rowsPerCommit = 500

    init(connections: PostgresConnections, listener: PostgresListener) {
        self.connections = connections
        self.listener = listener
        writes = GroupCommit(limit: Self.rowsPerCommit, row: \.id) { rows in
            try await Self.save(rows, on: connections)
        }
    }

    var description: String { "\(connections.url)" }
    var servesSeveralInstances: Bool { true }

    func load(_ id: String) async throws -> SavedState? {
        try await loadRevision(id)?.saved
    }

    func loadRevision(_ id: String) async throws -> (saved: SavedState, revision: Int64)? {
        try await Self.read([id], on: connections)[id]
    }

    func loadRevisions(_ ids: [String]) async throws -> [String: (saved: SavedState, revision: Int64)] {
        try await Self.read(ids, on: connections)
    }

    /// The rows of `ids` that exist, by key, in one query.
    static func read(_ ids: [String], on connections: PostgresConnections) async throws -> [String: (
        saved: SavedState, revision: Int64
    )] {
        var rows: [String: (saved: SavedState, revision: Int64)] = [:]
        for row in try await connections.run(Read(ids: ids)) {
            let (id, value, version, revision) = try row.decode((String, String, Int, Int64).self)
            rows[id] = (SavedState(data: Data(value.utf8), version: version), revision)
        }
        return rows
    }

    func save(_ data: Data, version: Int, for id: String) async throws {
        _ = try await connections.run(
            """
            INSERT INTO mosaic_state (id, value, version, revision) VALUES (\(id), \(Self.text(data)), \(version), 0)
            ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version
            """)
    }

    func save(_ data: Data, version: Int, for id: String, replacing revision: Int64?) async throws -> StateSave {
        try await writes.submit(StateRow(id: id, data: data, version: version, revision: revision))
    }

    /// Saves each of `rows` (of distinct keys) that is still at the revision its writer read, in one statement;
    /// the others' rows are read back as they are now.
    static func save(_ rows: [StateRow], on connections: PostgresConnections) async throws -> [StateSave] {
        let stored = try revisions(of: await connections.run(CompareAndSet(rows)))
        let lost = rows.map(\.id).filter { stored[$0] == nil }
        let current = lost.isEmpty ? [:] : try await read(lost, on: connections)
        return rows.map { row in
            if let revision = stored[row.id] { return .saved(revision: revision) }
            return .conflict(current: current[row.id]?.saved, revision: current[row.id]?.revision)
        }
    }

    func commit(_ rows: [StateRow], events: [OutboxEvent], completing: DeliveryCompletion?) async throws
        -> StateCommit
    {
        do {
            let revisions = try await connections.transaction { [connections] connection in
                // The deliveries first: their rows are locked from here on, so no claim takes them over meanwhile
                // (claims skip locked rows), and a stale attempt stops before any other work.
                if let completing {
                    let held = try await connections.deadlined(
                        PostgresEventStore.CompleteHeld(completion: completing), on: connection
                    ).get()
                    let completed = Set(try held.map { try $0.decode(Int64.self) })
                    let stale = completing.deliveries.filter { !completed.contains($0) }
                    if !stale.isEmpty { throw PostgresStale(deliveries: stale) }
                }
                let revisions =
                    rows.isEmpty
                    ? [:]
                    : try Self.revisions(
                        of: await connections.deadlined(CompareAndSet(rows), on: connection).get())
                if let lost = rows.first(where: { revisions[$0.id] == nil }) { throw PostgresConflict(id: lost.id) }
                if !events.isEmpty {
                    _ = try await connections.deadlined(PostgresEventStore.Append(events), on: connection).get()
                }
                FaultPoints.reach(.insideCommit)
                return revisions
            }
            FaultPoints.reach(.afterCommit)
            return .committed(revisions)
        } catch let conflict as PostgresConflict {
            let current = try await loadRevision(conflict.id)
            return .conflict(id: conflict.id, current: current?.saved, revision: current?.revision)
        } catch let stale as PostgresStale {
            return .stale(stale.deliveries)
        }
    }

    /// The new revision of each row a compare-and-set saved, by key.
    private static func revisions(of rows: [PostgresRow]) throws -> [String: Int64] {
        var revisions: [String: Int64] = [:]
        for row in rows {
            let (id, revision) = try row.decode((String, Int64).self)
            revisions[id] = revision
        }
        return revisions
    }

    func park(_ id: String, reason: String) async throws -> String {
        _ = try await connections.run(
            """
            WITH parked AS (DELETE FROM mosaic_state WHERE id = \(id) RETURNING id, value, version)
            INSERT INTO mosaic_state_unreadable (id, value, version, reason)
            SELECT id, value, version, \(reason) FROM parked
            """)
        return "the row was kept in mosaic_state_unreadable (with its version, for the backend's retention, 24 hours "
            + "unless set) in \(connections.url)"
    }

    func watch(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch {
        listener.watchState(onChange)
    }

    /// The JSON as text: the encoder's output is always UTF-8.
    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }
}

/// A transaction's row was changed by another writer first: the transaction rolls back.
struct PostgresConflict: Error {
    let id: String
}

/// Deliveries a transaction completes are no longer held by its claim: the transaction rolls back.
struct PostgresStale: Error {
    let deliveries: [Int64]
}
