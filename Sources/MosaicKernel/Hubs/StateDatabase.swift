internal import Foundation
internal import GRDB
internal import Mosaic

/// Persisted state keys in one SQLite database (`state.sqlite` in the state directory), a row per key holding
/// its JSON. Each write is a transaction, so a crash leaves the old value or the new one; rows that cannot be read
/// are moved to `mosaic_state_unreadable`, never overwritten.
///
/// The database runs in WAL mode with `synchronous = NORMAL`: a commit appends to the log without an `fsync` of its
/// own (the log is synced at checkpoints), which keeps a crash from tearing a value (SQLite guarantees each
/// transaction whole) while it may lose the last writes on power loss. Another process holding the write lock makes
/// a write wait, up to `busyTimeout`, rather than fail at once.
struct StateDatabase: StatePersister {
    private let queue: DatabaseQueue

    /// Opens (creating if need be) the database in `directory`.
    init(directory: String, busyTimeout: Duration = .seconds(5)) throws {
        let (seconds, attoseconds) = busyTimeout.components
        try self.init(directory: directory, busyMode: .timeout(Double(seconds) + Double(attoseconds) / 1e18))
    }

    /// Opens the database with `busyMode` deciding what a write does when another connection holds the lock
    /// (tests pass a callback, to see the write meet the lock).
    init(directory: String, busyMode: Database.BusyMode) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = busyMode
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        queue = try DatabaseQueue(
            path: URL(fileURLWithPath: directory).appendingPathComponent("state.sqlite").path,
            configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS mosaic_state (id TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
                    CREATE TABLE IF NOT EXISTS mosaic_state_unreadable (
                        id TEXT NOT NULL, value BLOB NOT NULL, reason TEXT NOT NULL, kept_at TEXT NOT NULL);
                    """)
        }
    }

    func load<Value: Decodable>(_ type: Value.Type, for id: String) -> (value: Value?, problem: Diagnostic?) {
        do {
            let data = try queue.read { db in
                try Data.fetchOne(db, sql: "SELECT value FROM mosaic_state WHERE id = ?", arguments: [id])
            }
            guard let data else { return (nil, nil) }
            do {
                return (try JSONDecoder().decode(Value.self, from: data), nil)
            } catch {
                try queue.write { db in
                    try db.execute(
                        sql: """
                            INSERT INTO mosaic_state_unreadable (id, value, reason, kept_at)
                                VALUES (?, ?, ?, datetime('now'));
                            DELETE FROM mosaic_state WHERE id = ?;
                            """,
                        arguments: [id, data, "\(error)", id])
                }
                return (
                    nil,
                    Diagnostic(
                        .statePersistence, .error, modules: [],
                        message: "The saved value of \(id) cannot be read as \(Value.self) (\(error)); the initial "
                            + "value is used. The row was kept in mosaic_state_unreadable.",
                        fix: "Restore the row from mosaic_state_unreadable if the data matters, or delete it.")
                )
            }
        } catch {
            return (
                nil,
                Diagnostic(
                    .statePersistence, .error, modules: [],
                    message: "The state database could not be read for \(id) (\(error)); the initial value is used.",
                    fix: "Check the state directory's state.sqlite; move it aside if it is damaged.")
            )
        }
    }

    func save<Value: Encodable>(_ value: Value, for id: String) throws {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(value)
            try queue.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO mosaic_state (id, value) VALUES (?, ?)", arguments: [id, data])
            }
        } catch {
            throw StateError("\(id) could not be saved in the state database: \(error). Its value is unchanged.")
        }
    }
}
