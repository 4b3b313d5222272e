internal import Dispatch
internal import Foundation
internal import GRDB
internal import Mosaic
internal import Synchronization

/// Persisted state keys in one SQLite database (`state.sqlite` in the state directory), a row per key holding
/// its JSON and the key's version when it was saved. Each write is a transaction, so a crash leaves the old value or
/// the new one; rows the code cannot use are moved to `mosaic_state_unreadable`, never overwritten. A database made
/// before keys had versions gains the `version` column (1 for every existing row) when it is opened.
///
/// The database runs in WAL mode with `synchronous = NORMAL`: a commit appends to the log without an `fsync` of its
/// own (the log is synced at checkpoints), which keeps a crash from tearing a value (SQLite guarantees each
/// transaction whole) while it may lose the last writes on power loss. Another process holding the write lock makes
/// a write wait, up to `busyTimeout`, rather than fail at once.
///
/// Every call runs on GRDB's own dispatch queue (its async API), never on a thread of the cooperative pool; so
/// does opening the database, on the first call (a failed open is tried again by the next). Saves of different keys
/// that arrive while one is under way share the next transaction (``GroupCommit``).
final class StateDatabase: StatePersister {
    private let file: DatabaseFile
    /// Saves, each a key's JSON and version, in transactions shared by the saves that arrive together.
    private let saves: GroupCommit<(id: String, data: Data, version: Int), Void>
    /// The database file, for diagnostics.
    var path: String { file.path }

    /// The database in `directory` (created if need be on the first call).
    convenience init(directory: String, busyTimeout: Duration = .seconds(5)) {
        let (seconds, attoseconds) = busyTimeout.components
        self.init(directory: directory, busyMode: .timeout(Double(seconds) + Double(attoseconds) / 1e18))
    }

    /// The database, with `busyMode` deciding what a write does when another connection holds the lock (tests pass
    /// a callback, to see the write meet the lock).
    init(directory: String, busyMode: Database.BusyMode) {
        file = DatabaseFile(directory: directory, busyMode: busyMode)
        saves = GroupCommit(limit: 500, row: \.id) { [file] rows in
            try await file.queue().write { db in
                for row in rows {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO mosaic_state (id, value, version) VALUES (?, ?, ?)",
                        arguments: [row.id, row.data, row.version])
                }
            }
            return rows.map { _ in () }
        }
    }

    /// Opens the database now (creating it and its tables), rather than on the first call.
    func open() async throws {
        _ = try await queue()
    }

    private func queue() async throws -> DatabaseQueue { try await file.queue() }

    /// Creates the tables, or brings tables made by an older Mosaic up to date: their rows gain a `version` column
    /// (1, the version of everything saved before keys had versions). `queue.write` runs this in one transaction,
    /// so a crash leaves the old schema or the new one.
    fileprivate static func createOrMigrateSchema(_ db: Database) throws {
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

    func load(_ id: String) async throws -> SavedState? {
        let queue = try await queue()
        do {
            return try await queue.read { db -> SavedState? in
                let row = try Row.fetchOne(
                    db, sql: "SELECT value, version FROM mosaic_state WHERE id = ?", arguments: [id])
                return row.map { SavedState(data: $0["value"], version: $0["version"]) }
            }
        } catch {
            throw StateError(
                .unavailable,
                "The state database could not be read for \(id) (\(error)). Check the state directory's "
                    + "state.sqlite; move it aside if it is damaged.")
        }
    }

    func save(_ data: Data, version: Int, for id: String) async throws {
        do {
            try await saves.submit((id, data, version))
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(
                .unavailable, "\(id) could not be saved in the state database: \(error). Its value is unchanged.")
        }
    }

    func park(_ id: String, reason: String) async throws -> String {
        let queue = try await queue()
        do {
            try await queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO mosaic_state_unreadable (id, value, version, reason, kept_at)
                            SELECT id, value, version, ?, datetime('now') FROM mosaic_state WHERE id = ?;
                        DELETE FROM mosaic_state WHERE id = ?;
                        """,
                    arguments: [reason, id, id])
            }
        } catch {
            throw StateError(
                .unavailable, "The row of \(id) could not be moved to mosaic_state_unreadable: \(error).")
        }
        return "the row was kept in mosaic_state_unreadable (with its version) in \(path)"
    }
}

/// The state database's file, opened once, on a dispatch thread, by the first call that needs it; a failed open
/// is tried again by the next.
private final class DatabaseFile: Sendable {
    private let directory: String
    let path: String
    private let busyMode: Database.BusyMode
    /// The open database, or its opening under way.
    private let opening = Locked<Task<DatabaseQueue, any Error>?>(nil)
    /// The open database, stored under this lock by the thread that opened it before anyone is told, and read under
    /// it by every caller: a hand-off the thread sanitizer sees (through `task.value` alone it saw none, and reported
    /// the queue's fields as raced, CI 2026-11-28).
    private let opened = Locked<DatabaseQueue?>(nil)

    init(directory: String, busyMode: Database.BusyMode) {
        self.directory = directory
        self.busyMode = busyMode
        path = URL(fileURLWithPath: directory).appendingPathComponent("state.sqlite").path
    }

    /// The open database, opening it the first time.
    func queue() async throws -> DatabaseQueue {
        if let queue = opened.withLock({ $0 }) { return queue }
        let task = opening.withLock { opening in
            if let task = opening { return task }
            let (directory, path, busyMode) = (directory, path, busyMode)
            let task = Task {
                try await withCheckedThrowingContinuation { continuation in
                    // A queue of its own (a thread that may block), not the global one, which few threads serve.
                    DispatchQueue(label: "mosaic.state-database.open").async {
                        let result = Result { try Self.open(directory: directory, path: path, busyMode: busyMode) }
                        if case .success(let queue) = result { self.opened.withLock { $0 = queue } }
                        continuation.resume(with: result)
                    }
                }
            }
            opening = task
            return task
        }
        do {
            let queue = try await task.value
            return opened.withLock { $0 } ?? queue
        } catch {
            opening.withLock { if $0 == task { $0 = nil } }
            throw StateError(
                .unavailable,
                "The state database \(path) cannot be opened (\(error)). Check that the directory is writable; move "
                    + "a damaged state.sqlite aside.")
        }
    }

    private static func open(directory: String, path: String, busyMode: Database.BusyMode) throws -> DatabaseQueue {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = busyMode
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in try StateDatabase.createOrMigrateSchema(db) }
        return queue
    }
}
