internal import Foundation
internal import GRDB
internal import Mosaic
internal import Synchronization

/// The outbox of durable events in the embedded database: `mosaic_event`, `mosaic_delivery` (one per event and
/// handler) and `mosaic_event_handler`, beside the state, with the claims, retries and parking of the outbox in
/// PostgreSQL. A done delivery is deleted, and its event with its last delivery.
extension EmbeddedStorage: DurableEventStore {
    func subscribe(_ subscriber: String, module: ModuleID, to type: String) async throws {
        let now = now()
        try await ownedQueue().write { db in
            try db.run(
                """
                INSERT INTO mosaic_event_handler (subscriber, module, event_type, last_run_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (subscriber) DO UPDATE SET module = excluded.module, event_type = excluded.event_type,
                    last_run_at = excluded.last_run_at
                """, [subscriber, module.rawValue, type, now])
        }
        wakeUps.withLock { _ = $0.handlers[type, default: []].insert(subscriber) }
    }

    func append(_ events: [OutboxEvent]) async throws {
        let now = now()
        let types = try await file.queue().write { db in
            let types = try Self.insert(events, at: now, in: db)
            FaultPoints.reach(.insideCommit)
            return types
        }
        FaultPoints.reach(.afterCommit)
        wake(handlers(of: types))
    }

    func claim(_ subscriber: String, limit: Int, lease: Duration) async throws -> [DurableDelivery] {
        let now = now()
        let claim = UUID()
        return try await ownedQueue().write { db in
            try db.run("UPDATE mosaic_event_handler SET last_run_at = ? WHERE subscriber = ?", [now, subscriber])
            let rows = try db.rows(
                """
                SELECT delivery.id, event.id, event.event_type, event.payload, event.sender, event.published_at,
                    delivery.attempts
                FROM mosaic_delivery delivery JOIN mosaic_event event ON event.id = delivery.event_id
                WHERE delivery.subscriber = ? AND delivery.state = 'pending' AND delivery.due_at <= ?
                    AND (delivery.claimed_until IS NULL OR delivery.claimed_until < ?)
                ORDER BY delivery.due_at, delivery.id LIMIT ?
                """, [subscriber, now, now, max(0, limit)])
            var claimed: [DurableDelivery] = []
            var unreadable: [Int64] = []
            for row in rows {
                let columns = Columns(row)
                guard let id = columns.integer(0) else { continue }
                guard let event = columns.text(1).flatMap(UUID.init(uuidString:)), let type = columns.text(2),
                    let payload = columns.data(3), let sender = columns.text(4),
                    let publishedAt = columns.real(5), let attempts = columns.integer(6)
                else {
                    unreadable.append(id)
                    continue
                }
                claimed.append(
                    DurableDelivery(
                        id: id, event: event, type: type, payload: payload, sender: ModuleID(rawValue: sender),
                        publishedAt: Date(timeIntervalSince1970: publishedAt), attempt: Int(attempts) + 1,
                        claim: claim))
            }
            if !claimed.isEmpty {
                let values: [any DatabaseValueConvertible] = [now + lease.inSeconds, claim.uuidString]
                try db.run(
                    """
                    UPDATE mosaic_delivery SET attempts = attempts + 1, claimed_until = ?, claim = ?
                    WHERE id IN (\(databaseQuestionMarks(count: claimed.count)))
                    """, StatementArguments(values + claimed.map(\.id)))
            }
            if !unreadable.isEmpty {
                // A row edited by hand into something no handler can read: kept, listed, never handed out.
                try db.execute(
                    sql: """
                        UPDATE mosaic_delivery SET state = 'parked',
                            last_error = 'the row of its event cannot be read; restore it, then resubmit'
                        WHERE id IN (\(databaseQuestionMarks(count: unreadable.count)))
                        """,
                    arguments: StatementArguments(unreadable))
            }
            return claimed
        }
    }

    func complete(_ deliveries: [Int64], claim: UUID) async throws -> Int {
        let completed = try await file.queue().write { db in
            let completed = try Self.deleteDeliveries(deliveries, claim: claim, in: db)
            FaultPoints.reach(.insideCommit)
            return completed
        }
        FaultPoints.reach(.afterCommit)
        return completed.count
    }

    func retry(_ delivery: Int64, claim: UUID, after delay: Duration, error: String) async throws {
        let due = now() + delay.inSeconds
        try await file.queue().write { db in
            try Self.endClaim(
                delivery, claim: claim, set: "due_at = ?, last_error = ?", arguments: [due, error], in: db)
        }
    }

    func park(_ delivery: Int64, claim: UUID, error: String) async throws {
        try await file.queue().write { db in
            try Self.endClaim(
                delivery, claim: claim, set: "state = 'parked', last_error = ?", arguments: [error], in: db)
        }
    }

    func release(_ deliveries: [Int64], claim: UUID) async throws {
        guard !deliveries.isEmpty else { return }
        try await file.queue().write { db in
            try db.run(
                """
                UPDATE mosaic_delivery SET claimed_until = NULL, claim = NULL, attempts = max(attempts - 1, 0)
                WHERE id IN (\(databaseQuestionMarks(count: deliveries.count))) AND claim = ?
                    AND state = 'pending'
                """,
                StatementArguments(deliveries.map { $0 as any DatabaseValueConvertible } + [claim.uuidString]))
        }
    }

    func watch(_ onAppend: @escaping @Sendable (String) -> Void) -> StoreWatch {
        let token = wakeUps.withLock { wakeUps in
            wakeUps.nextWatcher += 1
            wakeUps.watchers[wakeUps.nextWatcher] = onAppend
            return wakeUps.nextWatcher
        }
        return StoreWatch { [weak self] in self?.wakeUps.withLock { _ = $0.watchers.removeValue(forKey: token) } }
    }

    // MARK: Shared with transactions

    /// Stores `events`, each with a pending delivery for each handler of its type, due at `now`; an event no handler
    /// takes is not kept. Returns the types that got deliveries.
    static func insert(_ events: [OutboxEvent], at now: Double, in db: Database) throws -> Set<String> {
        var types: Set<String> = []
        for event in events {
            try db.run(
                """
                INSERT INTO mosaic_event (id, event_type, payload, sender, published_at) VALUES (?, ?, ?, ?, ?)
                """, [event.id.uuidString, event.type, event.payload, event.sender.rawValue, now])
            try db.run(
                """
                INSERT INTO mosaic_delivery (event_id, subscriber, due_at)
                SELECT ?, subscriber, ? FROM mosaic_event_handler WHERE event_type = ? ORDER BY subscriber
                """, [event.id.uuidString, now, event.type])
            if db.changesCount == 0 {
                try db.run("DELETE FROM mosaic_event WHERE id = ?", [event.id.uuidString])
            } else {
                types.insert(event.type)
            }
        }
        return types
    }

    /// Deletes the deliveries of `ids` that `claim` still holds, and their events once no delivery needs them;
    /// returns the ones it deleted.
    static func deleteDeliveries(_ ids: [Int64], claim: UUID, in db: Database) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let held = try db.rows(
            """
            SELECT id, event_id FROM mosaic_delivery
            WHERE id IN (\(databaseQuestionMarks(count: ids.count))) AND claim = ? AND state = 'pending'
            """, StatementArguments(ids.map { $0 as any DatabaseValueConvertible } + [claim.uuidString])
        ).map(Columns.init)
        let done = held.compactMap { $0.integer(0) }
        guard !done.isEmpty else { return [] }
        let events = Set(held.compactMap { $0.text(1) })
        try db.run(
            "DELETE FROM mosaic_delivery WHERE id IN (\(databaseQuestionMarks(count: done.count)))",
            StatementArguments(done))
        try db.run(
            """
            DELETE FROM mosaic_event WHERE id IN (\(databaseQuestionMarks(count: events.count)))
                AND NOT EXISTS (SELECT 1 FROM mosaic_delivery WHERE event_id = mosaic_event.id)
            """, StatementArguments(Array(events)))
        return Set(done)
    }

    /// The running handlers of `types`.
    func handlers(of types: Set<String>) -> Set<String> {
        guard !types.isEmpty else { return [] }
        return wakeUps.withLock { wakeUps in types.reduce(into: []) { $0.formUnion(wakeUps.handlers[$1] ?? []) } }
    }

    /// Tells every watch that `subscribers` have deliveries to claim.
    func wake(_ subscribers: Set<String>) {
        guard !subscribers.isEmpty else { return }
        let watchers = wakeUps.withLock { Array($0.watchers.values) }
        for subscriber in subscribers.sorted() { for watcher in watchers { watcher(subscriber) } }
    }

    // MARK: Helpers

    /// The event of a delivery row whose event cannot be read, as the list of undelivered events shows it.
    static let unknownEvent = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The database, when this process owns the outbox (claims and handlers are refused otherwise).
    func ownedQueue() async throws -> DatabaseQueue {
        let opened = try await file.database()
        guard opened.ownsOutbox else {
            throw StateError(
                .unavailable,
                "Another process runs the durable handlers of \(file.directory) (it holds state.lock there), so "
                    + "this one does not; give each process a state directory of its own, or share PostgreSQL "
                    + "(KernelOptions.externalStorage) between them.")
        }
        return opened.queue
    }

    /// Ends `claim` on `delivery`, if it still holds it, setting `columns` too.
    private static func endClaim(
        _ delivery: Int64, claim: UUID, set columns: String, arguments: [any DatabaseValueConvertible],
        in db: Database
    ) throws {
        try db.run(
            """
            UPDATE mosaic_delivery SET claimed_until = NULL, claim = NULL, \(columns)
            WHERE id = ? AND claim = ? AND state = 'pending'
            """, StatementArguments(arguments + [delivery, claim.uuidString]))
    }
}
