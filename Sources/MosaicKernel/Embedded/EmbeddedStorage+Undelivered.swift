internal import Foundation
internal import GRDB
internal import Mosaic
internal import Synchronization

/// What an operator sees and does of the embedded outbox: the deliveries that wait or were given up on, a
/// resubmit, and the handlers whose deliveries are abandoned (a module uninstalled, a handler stranded).
extension EmbeddedStorage {
    func undelivered(limit: Int) async throws -> [UndeliveredEvent] {
        try await file.queue().read { db in
            try db.rows(
                """
                SELECT delivery.id, event.id, event.event_type, delivery.subscriber, event.sender,
                    event.published_at, delivery.attempts, delivery.state, coalesce(delivery.last_error, '')
                FROM mosaic_delivery delivery LEFT JOIN mosaic_event event ON event.id = delivery.event_id
                WHERE delivery.state IN ('parked', 'abandoned') ORDER BY delivery.id LIMIT ?
                """, [max(0, limit)]
            ).compactMap { row in
                let columns = Columns(row)
                guard let id = columns.integer(0) else { return nil }
                return UndeliveredEvent(
                    id: id, event: columns.text(1).flatMap(UUID.init(uuidString:)) ?? Self.unknownEvent,
                    type: columns.text(2) ?? "(unreadable)", subscriber: columns.text(3) ?? "(unreadable)",
                    sender: ModuleID(rawValue: columns.text(4) ?? "(unreadable)"),
                    publishedAt: Date(timeIntervalSince1970: columns.real(5) ?? 0),
                    attempts: Int(columns.integer(6) ?? 0),
                    reason: columns.text(7) == "abandoned" ? .abandoned : .parked,
                    lastError: columns.text(8) ?? "")
            }
        }
    }

    func resubmit(_ delivery: Int64) async throws -> Bool {
        let now = now()
        let subscriber = try await file.queue().write { db -> String? in
            try db.run(
                """
                UPDATE mosaic_delivery SET state = 'pending', attempts = 0, due_at = ?, last_error = NULL
                WHERE id = ? AND state IN ('parked', 'abandoned')
                    AND subscriber IN (SELECT subscriber FROM mosaic_event_handler)
                """, [now, delivery])
            guard db.changesCount == 1 else { return nil }
            return try Row.fetchOne(
                db, sql: "SELECT subscriber FROM mosaic_delivery WHERE id = ?", arguments: [delivery]
            ).flatMap { Columns($0).text(0) }
        }
        if let subscriber { wake([subscriber]) }
        return subscriber != nil
    }

    func abandon(module: ModuleID, reason: String) async throws {
        try await file.queue().write { db in
            try db.execute(
                sql: """
                    UPDATE mosaic_delivery SET state = 'abandoned', claimed_until = NULL, claim = NULL, last_error = ?
                    WHERE state = 'pending'
                        AND subscriber IN (SELECT subscriber FROM mosaic_event_handler WHERE module = ?);
                    DELETE FROM mosaic_event_handler WHERE module = ?;
                    """,
                arguments: [reason, module.rawValue, module.rawValue])
        }
        wakeUps.withLock { wakeUps in
            for type in wakeUps.handlers.keys {
                wakeUps.handlers[type] = wakeUps.handlers[type]?.filter { !$0.hasPrefix(module.rawValue + "/") }
            }
        }
    }

    func handlersWithPendingDeliveries() async throws -> [RecordedHandler] {
        let now = now()
        return try await file.queue().read { db in
            try db.rows(
                """
                SELECT handler.subscriber, handler.module, count(delivery.id), handler.last_run_at
                FROM mosaic_event_handler handler JOIN mosaic_delivery delivery
                    ON delivery.subscriber = handler.subscriber AND delivery.state = 'pending'
                GROUP BY handler.subscriber ORDER BY handler.subscriber
                """
            ).compactMap { row in
                let columns = Columns(row)
                guard let subscriber = columns.text(0), let module = columns.text(1) else { return nil }
                return RecordedHandler(
                    subscriber: subscriber, module: ModuleID(rawValue: module),
                    pending: Int(columns.integer(2) ?? 0),
                    idle: .seconds(max(0, now - (columns.real(3) ?? now))), runElsewhere: false)
            }
        }
    }

    func abandon(subscriber: String, reason: String) async throws {
        try await file.queue().write { db in
            try db.execute(
                sql: """
                    UPDATE mosaic_delivery SET state = 'abandoned', claimed_until = NULL, claim = NULL, last_error = ?
                    WHERE state = 'pending' AND subscriber = ?;
                    DELETE FROM mosaic_event_handler WHERE subscriber = ?;
                    """,
                arguments: [reason, subscriber, subscriber])
        }
    }
}
