internal import Foundation
internal import Mosaic
internal import MosaicKernel
internal import PostgresNIO

/// The outbox of durable events in `mosaic_event` and `mosaic_delivery`, shared by every instance. Every change is
/// one statement, so it is atomic without a transaction; times are the database's, so instances' clocks may differ.
struct PostgresEventStore: DurableEventStore {
    let connections: PostgresConnections
    let listener: PostgresListener

    /// Registers the handler, and this instance as one that runs it.
    func subscribe(_ subscriber: String, module: ModuleID, to type: String) async throws {
        let instance = connections.instance
        _ = try await connections.run(
            """
            WITH seen AS (
                INSERT INTO mosaic_instance (id) VALUES (\(instance)) ON CONFLICT (id) DO UPDATE SET seen_at = now()),
            handler AS (
                INSERT INTO mosaic_event_handler (subscriber, module, event_type)
                VALUES (\(subscriber), \(module.rawValue), \(type))
                ON CONFLICT (subscriber) DO UPDATE SET module = EXCLUDED.module, event_type = EXCLUDED.event_type
                RETURNING subscriber)
            INSERT INTO mosaic_event_handler_instance (subscriber, instance)
            SELECT subscriber, \(instance) FROM handler ON CONFLICT DO NOTHING
            """)
    }

    func append(_ events: [OutboxEvent]) async throws {
        _ = try await connections.run(Append(events))
        FaultPoints.reach(.afterCommit)
    }

    func claim(_ subscriber: String, limit: Int, lease: Duration) async throws -> [DurableDelivery] {
        let claim = UUID()
        let rows = try await connections.run(Claim(subscriber: subscriber, limit: limit, lease: lease, claim: claim))
        // Handed out in the order claimed (which RETURNING does not keep).
        return try rows.map { row in
            let (id, event, type, payload, sender, publishedAt, attempt, dueAt) = try row.decode(
                (Int64, UUID, String, String, String, Date, Int, Date).self)
            let delivery = DurableDelivery(
                id: id, event: event, type: type, payload: Data(payload.utf8), sender: ModuleID(rawValue: sender),
                publishedAt: publishedAt, attempt: attempt, claim: claim)
            return (delivery, dueAt)
        }.sorted { ($0.1, $0.0.id) < ($1.1, $1.0.id) }.map(\.0)
    }

    func complete(_ deliveries: [Int64], claim: UUID) async throws -> Int {
        let completed = try await connections.run(Complete(deliveries: deliveries, claim: claim)).count
        FaultPoints.reach(.afterCommit)
        return completed
    }

    func retry(_ delivery: Int64, claim: UUID, after delay: Duration, error: String) async throws {
        _ = try await connections.run(
            """
            UPDATE mosaic_delivery
            SET claimed_until = NULL, claim = NULL, due_at = now() + make_interval(secs => \(delay.seconds)),
                last_error = \(error)
            WHERE id = \(delivery) AND claim = \(claim) AND state = 'pending'
            """)
    }

    func park(_ delivery: Int64, claim: UUID, error: String) async throws {
        _ = try await connections.run(
            """
            UPDATE mosaic_delivery SET state = 'parked', claimed_until = NULL, claim = NULL, last_error = \(error)
            WHERE id = \(delivery) AND claim = \(claim) AND state = 'pending'
            """)
    }

    func release(_ deliveries: [Int64], claim: UUID) async throws {
        _ = try await connections.run(
            """
            UPDATE mosaic_delivery SET claimed_until = NULL, claim = NULL, attempts = greatest(attempts - 1, 0)
            WHERE id = ANY(\(deliveries)) AND claim = \(claim) AND state = 'pending'
            """)
    }

    func undelivered(limit: Int) async throws -> [UndeliveredEvent] {
        let rows = try await connections.run(
            """
            SELECT delivery.id, event.id, event.event_type, delivery.subscriber, event.sender, event.published_at,
                delivery.attempts, delivery.state, coalesce(delivery.last_error, '')
            FROM mosaic_delivery delivery JOIN mosaic_event event ON event.id = delivery.event_id
            WHERE delivery.state IN ('parked', 'abandoned') ORDER BY delivery.id LIMIT \(limit)
            """)
        return try rows.map { row in
            let (id, event, type, subscriber, sender, publishedAt, attempts, state, lastError) = try row.decode(
                (Int64, UUID, String, String, String, Date, Int, String, String).self)
            return UndeliveredEvent(
                id: id, event: event, type: type, subscriber: subscriber, sender: ModuleID(rawValue: sender),
                publishedAt: publishedAt, attempts: attempts, reason: state == "parked" ? .parked : .abandoned,
                lastError: lastError)
        }
    }

    func resubmit(_ delivery: Int64) async throws -> Bool {
        let rows = try await connections.run(
            """
            UPDATE mosaic_delivery SET state = 'pending', attempts = 0, due_at = now(), last_error = NULL
            WHERE id = \(delivery) AND state IN ('parked', 'abandoned')
                AND subscriber IN (SELECT subscriber FROM mosaic_event_handler) RETURNING id
            """)
        return !rows.isEmpty
    }

    /// This instance stops running `module`'s handlers; a handler no other live instance runs (one seen within
    /// the listener's bound) is removed, and its pending deliveries abandoned. (Every part of one statement sees
    /// the same snapshot, hence this instance is left out by name rather than by its deleted rows.)
    func abandon(module: ModuleID, reason: String) async throws {
        let instance = connections.instance
        _ = try await connections.run(
            """
            WITH leaving AS (
                DELETE FROM mosaic_event_handler_instance runner USING mosaic_event_handler handler
                WHERE runner.subscriber = handler.subscriber AND handler.module = \(module.rawValue)
                    AND runner.instance = \(instance)),
            gone AS (
                DELETE FROM mosaic_event_handler handler
                WHERE handler.module = \(module.rawValue) AND NOT EXISTS (
                    SELECT 1 FROM mosaic_event_handler_instance runner
                    JOIN mosaic_instance live ON live.id = runner.instance
                    WHERE runner.subscriber = handler.subscriber AND runner.instance <> \(instance)
                        AND live.seen_at > now() - make_interval(secs => \(listener.bound.seconds)))
                RETURNING subscriber)
            UPDATE mosaic_delivery SET state = 'abandoned', claimed_until = NULL, claim = NULL, last_error = \(reason)
            WHERE state = 'pending' AND subscriber IN (SELECT subscriber FROM gone)
            """)
    }

    func handlersWithPendingDeliveries() async throws -> [RecordedHandler] {
        let instance = connections.instance
        let rows = try await connections.run(
            """
            SELECT handler.subscriber, handler.module, count(delivery.id),
                extract(epoch FROM now() - handler.last_run_at)::float8,
                EXISTS (
                    SELECT 1 FROM mosaic_event_handler_instance runner
                    JOIN mosaic_instance live ON live.id = runner.instance
                    WHERE runner.subscriber = handler.subscriber AND runner.instance <> \(instance)
                        AND live.seen_at > now() - make_interval(secs => \(listener.bound.seconds)))
            FROM mosaic_event_handler handler
            JOIN mosaic_delivery delivery ON delivery.subscriber = handler.subscriber AND delivery.state = 'pending'
            GROUP BY handler.subscriber, handler.module, handler.last_run_at ORDER BY handler.subscriber
            """)
        return try rows.map { row in
            let (subscriber, module, pending, idle, elsewhere) = try row.decode(
                (String, String, Int, Double, Bool).self)
            return RecordedHandler(
                subscriber: subscriber, module: ModuleID(rawValue: module), pending: pending,
                idle: .seconds(max(0, idle)), runElsewhere: elsewhere)
        }
    }

    func abandon(subscriber: String, reason: String) async throws {
        _ = try await connections.run(
            """
            WITH gone AS (DELETE FROM mosaic_event_handler WHERE subscriber = \(subscriber))
            UPDATE mosaic_delivery SET state = 'abandoned', claimed_until = NULL, claim = NULL, last_error = \(reason)
            WHERE state = 'pending' AND subscriber = \(subscriber)
            """)
    }

    func watch(_ onAppend: @escaping @Sendable (String) -> Void) -> StoreWatch {
        listener.watchDeliveries(onAppend)
    }
}

extension Duration {
    /// The duration in seconds, for `make_interval`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
