internal import Foundation
internal import GRDB
internal import Mosaic

/// The tables of the embedded database, as numbered steps; the database records how many it has in
/// `PRAGMA user_version`. Opening applies the missing steps in the open's one transaction, so a crash leaves the
/// schema as it was. Never edit a step that has shipped: add one.
enum EmbeddedSchema {
    static let steps: [@Sendable (Database) throws -> Void] = [
        // 1: persisted keys and their parking place, as releases before the outbox kept them (a database of theirs is
        // at version 0 with these tables, some without the `version` column).
        { db in
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
        },
        // 2: revisions, so that a write replaces only the value its writer read (another process may write the file
        // too), and the outbox of durable events beside the state, so that a transaction's keys, its events and a
        // handler's completion commit in one SQLite transaction. A delivery is pending until done (then deleted,
        // with its event once no delivery needs it), parked after its last attempt, or abandoned with its handler.
        // A handler's `last_run_at` moves at each of its claims. Times are seconds since 1970 on the kernel's clock.
        { db in
            try db.execute(
                sql: """
                    ALTER TABLE mosaic_state ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE mosaic_revision (value INTEGER NOT NULL);
                    INSERT INTO mosaic_revision (value) VALUES (0);
                    CREATE TABLE mosaic_event_handler (
                        subscriber TEXT PRIMARY KEY NOT NULL, module TEXT NOT NULL, event_type TEXT NOT NULL,
                        last_run_at REAL NOT NULL DEFAULT 0);
                    CREATE INDEX mosaic_event_handler_type ON mosaic_event_handler (event_type);
                    CREATE TABLE mosaic_event (
                        id TEXT PRIMARY KEY NOT NULL, event_type TEXT NOT NULL, payload BLOB NOT NULL,
                        sender TEXT NOT NULL, published_at REAL NOT NULL);
                    CREATE TABLE mosaic_delivery (
                        id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, subscriber TEXT NOT NULL,
                        state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
                        due_at REAL NOT NULL, claimed_until REAL, claim TEXT, last_error TEXT,
                        UNIQUE (event_id, subscriber));
                    CREATE INDEX mosaic_delivery_next ON mosaic_delivery (subscriber, due_at, id)
                        WHERE state = 'pending';
                    CREATE INDEX mosaic_delivery_event ON mosaic_delivery (event_id);
                    """)
        },
    ]

    /// Brings the tables up to date.
    ///
    /// - Throws: ``StateError`` when the database is newer than this release knows.
    static func migrate(_ db: Database) throws {
        let applied = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        guard (0...steps.count).contains(applied) else {
            throw StateError(
                .unavailable,
                "The state database is at schema version \(applied), which this release of Mosaic does not know "
                    + "(it knows 0 to \(steps.count)). Run the release that wrote it, or move state.sqlite aside.")
        }
        for step in steps.dropFirst(applied) { try step(db) }
        try db.execute(sql: "PRAGMA user_version = \(steps.count)")
    }
}

/// A row's columns read without a conversion that could stop the process: a value the code does not expect (a
/// file edited by hand, another tool's write) reads as `nil`.
struct Columns {
    private let values: [DatabaseValue]

    init(_ row: Row) { values = Array(row.databaseValues) }

    private func value(_ index: Int) -> DatabaseValue { values.indices.contains(index) ? values[index] : .null }

    func data(_ index: Int) -> Data? { Data.fromDatabaseValue(value(index)) }
    func text(_ index: Int) -> String? { String.fromDatabaseValue(value(index)) }
    func integer(_ index: Int) -> Int64? { Int64.fromDatabaseValue(value(index)) }
    func real(_ index: Int) -> Double? { Double.fromDatabaseValue(value(index)) }
}

extension Database {
    /// Runs `sql`, one statement, compiled once per connection and kept: the outbox's and the state's statements
    /// run for every write, publish, claim and completion, and compiling them was much of their cost.
    func run(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The rows `sql` (one statement, kept compiled) answers.
    func rows(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try Row.fetchAll(cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first row `sql` (one statement, kept compiled) answers.
    func row(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}
