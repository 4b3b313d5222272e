internal import Foundation
internal import GRDB
internal import Mosaic
internal import Synchronization

/// The embedded storage of one instance: every persisted key and the outbox of durable events, in one SQLite
/// database (`state.sqlite` in the state directory), so that a transaction's keys, its events and a durable
/// handler's completion commit in one SQLite transaction, and durable events survive the process.
///
/// What it keeps through a crash: every write and publish that returned (a transaction is committed before it
/// returns; the database is in WAL mode with `synchronous = NORMAL`, so a killed process loses nothing committed,
/// while a power loss may lose the last commits). A delivery claimed by a process that died is handed out again as
/// soon as the next process opens the database.
///
/// Every call runs on GRDB's dispatch queue (its async API), never on a thread of the cooperative pool. Saves of
/// different keys that arrive together share one transaction (``GroupCommit``), as publishes do in the outbox.
final class EmbeddedStorage: TransactionalStateStore, CustomStringConvertible {
    let file: DatabaseFile
    let clock: KernelClock
    /// The wall-clock time when the kernel's clock read zero: stored times are `origin + clock.now()`, comparable
    /// across restarts, and moved by a test's manual clock.
    let origin = Date().timeIntervalSince1970
    /// Compare-and-set saves, grouped.
    private let saves: GroupCommit<StateRow, StateSave>
    /// The running handlers by event type, and the watches to wake when one of them gets deliveries.
    let wakeUps = Locked(WakeUps())

    struct WakeUps {
        var handlers: [String: Set<String>] = [:]
        var watchers: [Int: @Sendable (String) -> Void] = [:]
        var nextWatcher = 0
    }

    /// The storage in `directory` (created if need be on the first call). A write waits up to `busyTimeLimit` for
    /// another process's lock.
    convenience init(directory: String, busyTimeLimit: Duration = .seconds(5), clock: KernelClock) {
        self.init(directory: directory, busyMode: .timeout(busyTimeLimit.inSeconds), clock: clock)
    }

    /// The storage, with `busyMode` deciding what a write does when another connection holds the lock (tests pass
    /// a callback, to see the write meet the lock).
    init(directory: String, busyMode: Database.BusyMode, clock: KernelClock) {
        self.clock = clock
        // What a crashed process had claimed is handed out again at once, by the process that owns the outbox now.
        file = DatabaseFile(directory: directory, busyMode: busyMode) { db, ownsOutbox in
            if ownsOutbox {
                try db.run("UPDATE mosaic_delivery SET claim = NULL, claimed_until = NULL WHERE claim IS NOT NULL")
            }
        }
        saves = GroupCommit(limit: 500, row: \.id) { [file] rows in
            try await file.queue().write { db in
                try rows.map { row in
                    if let revision = try Self.compareAndSet(row, in: db) { return .saved(revision: revision) }
                    let current = try Self.read(row.id, in: db)
                    return .conflict(current: current?.saved, revision: current?.revision)
                }
            }
        }
    }

    var description: String { file.path }
    /// One instance: a row at a newer version is data this release cannot use (a downgrade), parked.
    var servesSeveralInstances: Bool { false }
    /// The database file, for diagnostics.
    var path: String { file.path }

    /// The time now, as stored times read it.
    func now() -> Double { origin + clock.now().inSeconds }

    /// Opens the database now (creating it and its tables), rather than on the first call.
    func open() async throws { _ = try await file.database() }

    // MARK: Persisted keys

    func load(_ id: String) async throws -> SavedState? {
        try await loadRevision(id)?.saved
    }

    /// `id`'s row, or, when there is none, the JSON file an earlier release kept it in, moved into the database once.
    func loadRevision(_ id: String) async throws -> (saved: SavedState, revision: Int64)? {
        let queue = try await file.queue()
        let legacy = LegacyStateFiles(directory: file.directory)
        do {
            // The file check is made on the database's queue too: it is a call that may block.
            let found = try await queue.read { db in (try Self.read(id, in: db), legacy.exists(id)) }
            if let row = found.0 { return row }
            guard found.1 else { return nil }
            return try await queue.write { db in
                if let row = try Self.read(id, in: db) { return row }
                guard let saved = try legacy.loadNow(id) else { return nil }
                let revision = try Self.nextRevision(in: db)
                try db.run(
                    "INSERT INTO mosaic_state (id, value, version, revision) VALUES (?, ?, ?, ?)",
                    [id, saved.data, saved.version, revision])
                // Kept beside the database rather than deleted; a crash before this reads the row next time.
                try legacy.retire(id)
                return (saved, revision)
            }
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(
                .unavailable,
                "The state database could not be read for \(id) (\(error)). Check the state directory's "
                    + "state.sqlite; move it aside if it is damaged.")
        }
    }

    func save(_ data: Data, version: Int, for id: String) async throws {
        do {
            try await file.queue().write { db in
                let revision = try Self.nextRevision(in: db)
                try db.run(
                    """
                    INSERT INTO mosaic_state (id, value, version, revision) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET value = excluded.value, version = excluded.version,
                        revision = excluded.revision
                    """, [id, data, version, revision])
            }
        } catch {
            throw Self.unsaved(id, error)
        }
    }

    func save(_ data: Data, version: Int, for id: String, replacing revision: Int64?) async throws -> StateSave {
        do {
            return try await saves.submit(StateRow(id: id, data: data, version: version, revision: revision))
        } catch {
            throw Self.unsaved(id, error)
        }
    }

    func commit(_ rows: [StateRow], events: [OutboxEvent], completing: DeliveryCompletion?) async throws
        -> StateCommit
    {
        let now = now()
        let outcome: (StateCommit, woken: Set<String>)
        do {
            outcome = try await file.queue().write { db in
                // Nothing is stored unless all of it is: a throw rolls the SQLite transaction back.
                if let completing {
                    let completed = try Self.deleteDeliveries(completing.deliveries, claim: completing.claim, in: db)
                    let stale = completing.deliveries.filter { !completed.contains($0) }
                    if !stale.isEmpty { throw Rollback(.stale(stale)) }
                }
                var revisions: [String: Int64] = [:]
                for row in rows {
                    guard let revision = try Self.compareAndSet(row, in: db) else {
                        let current = try Self.read(row.id, in: db)
                        throw Rollback(.conflict(id: row.id, current: current?.saved, revision: current?.revision))
                    }
                    revisions[row.id] = revision
                }
                let types = try Self.insert(events, at: now, in: db)
                FaultPoints.reach(.insideCommit)
                return (.committed(revisions), self.handlers(of: types))
            }
            FaultPoints.reach(.afterCommit)
        } catch let rollback as Rollback {
            return rollback.outcome
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(
                .unavailable,
                "The transaction could not be committed in the state database: \(error). Nothing was "
                    + "stored.")
        }
        wake(outcome.woken)
        return outcome.0
    }

    func park(_ id: String, reason: String) async throws -> String {
        do {
            try await file.queue().write { db in
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

    /// Changes made here are installed by the writer itself; no other process's changes are announced.
    func watch(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch {
        StoreWatch {}
    }

    // MARK: Statements

    /// A transaction's outcome that stores nothing.
    private struct Rollback: Error {
        let outcome: StateCommit
        init(_ outcome: StateCommit) { self.outcome = outcome }
    }

    private static func unsaved(_ id: String, _ error: any Error) -> StateError {
        if let error = error as? StateError { return error }
        return StateError(
            .unavailable, "\(id) could not be saved in the state database: \(error). Its value is unchanged.")
    }

    /// The next revision: every save of every row takes a new one, so revisions only grow, even across a row parked
    /// and written again.
    static func nextRevision(in db: Database) throws -> Int64 {
        try db.run("UPDATE mosaic_revision SET value = value + 1")
        return try db.row("SELECT value FROM mosaic_revision").flatMap { Columns($0).integer(0) } ?? 0
    }

    /// `id`'s row. A value of an unexpected kind (the file edited by hand) reads as data no key decodes, so the
    /// hub parks it rather than this process stopping.
    static func read(_ id: String, in db: Database) throws -> (saved: SavedState, revision: Int64)? {
        guard
            let row = try db.row("SELECT value, version, revision FROM mosaic_state WHERE id = ?", [id])
        else { return nil }
        let columns = Columns(row)
        let saved = SavedState(data: columns.data(0) ?? Data(), version: columns.integer(1).map { Int($0) } ?? 1)
        return (saved, columns.integer(2) ?? 0)
    }

    /// Saves `row` if it is still at the revision its writer read (`nil`: no row yet); its new revision, or `nil`
    /// when another writer got there first.
    static func compareAndSet(_ row: StateRow, in db: Database) throws -> Int64? {
        let revision = try nextRevision(in: db)
        if let expected = row.revision {
            try db.run(
                "UPDATE mosaic_state SET value = ?, version = ?, revision = ? WHERE id = ? AND revision = ?",
                [row.data, row.version, revision, row.id, expected])
        } else {
            try db.run(
                """
                INSERT INTO mosaic_state (id, value, version, revision) VALUES (?, ?, ?, ?)
                ON CONFLICT (id) DO NOTHING
                """, [row.id, row.data, row.version, revision])
        }
        return db.changesCount == 1 ? revision : nil
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
