internal import Foundation
internal import GRDB
internal import Mosaic

/// Persisted state keys in one SQLite database (`state.sqlite` in the state directory), a row per key holding
/// its JSON and the key's version when it was saved. Each write is a transaction, so a crash leaves the old value or
/// the new one; rows the code cannot use are moved to `mosaic_state_unreadable`, never overwritten. A database made
/// before keys had versions gains the `version` column (1 for every existing row) when it is opened.
///
/// The database runs in WAL mode with `synchronous = NORMAL`: a commit appends to the log without an `fsync` of its
/// own (the log is synced at checkpoints), which keeps a crash from tearing a value (SQLite guarantees each
/// transaction whole) while it may lose the last writes on power loss. Another process holding the write lock makes
/// a write wait, up to `busyTimeout`, rather than fail at once.
struct StateDatabase: StatePersister {
    private let queue: DatabaseQueue
    /// The database file, for diagnostics.
    let path: String

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
        path = URL(fileURLWithPath: directory).appendingPathComponent("state.sqlite").path
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in try Self.createOrMigrateSchema(db) }
    }

    /// Creates the tables, or brings tables made by an older Mosaic up to date: their rows gain a `version` column
    /// (1, the version of everything saved before keys had versions). `queue.write` runs this in one transaction,
    /// so a crash leaves the old schema or the new one.
    private static func createOrMigrateSchema(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS mosaic_state (
                    id TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL, version INTEGER NOT NULL DEFAULT 1);
                CREATE TABLE IF NOT EXISTS mosaic_state_unreadable (
                    id TEXT NOT NULL, value BLOB NOT NULL, reason TEXT NOT NULL, kept_at TEXT NOT NULL,
                    version INTEGER NOT NULL DEFAULT 1);
                """)
        for table in ["mosaic_state", "mosaic_state_unreadable"]
        where try !db.columns(in: table).contains(where: { $0.name == "version" }) {
            try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN version INTEGER NOT NULL DEFAULT 1")
        }
    }

    func load(_ id: String) throws -> SavedState? {
        do {
            let row = try queue.read { db in
                try Row.fetchOne(db, sql: "SELECT value, version FROM mosaic_state WHERE id = ?", arguments: [id])
            }
            guard let row else { return nil }
            return SavedState(data: row["value"], version: row["version"])
        } catch {
            throw StateError(
                "The state database could not be read for \(id) (\(error)). Check the state directory's "
                    + "state.sqlite; move it aside if it is damaged.")
        }
    }

    func save(_ data: Data, version: Int, for id: String) throws {
        do {
            try queue.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO mosaic_state (id, value, version) VALUES (?, ?, ?)",
                    arguments: [id, data, version])
            }
        } catch {
            throw StateError("\(id) could not be saved in the state database: \(error). Its value is unchanged.")
        }
    }

    func park(_ id: String, reason: String) throws -> String {
        do {
            try queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO mosaic_state_unreadable (id, value, version, reason, kept_at)
                            SELECT id, value, version, ?, datetime('now') FROM mosaic_state WHERE id = ?;
                        DELETE FROM mosaic_state WHERE id = ?;
                        """,
                    arguments: [reason, id, id])
            }
        } catch {
            throw StateError("The row of \(id) could not be moved to mosaic_state_unreadable: \(error).")
        }
        return "the row was kept in mosaic_state_unreadable (with its version) in \(path)"
    }
}
