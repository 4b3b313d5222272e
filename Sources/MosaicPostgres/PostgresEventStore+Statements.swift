internal import Foundation
internal import Mosaic
internal import MosaicKernel
internal import PostgresNIO

// The outbox's statements that run for every event: prepared, so that each connection has the server parse and
// plan them once, instead of at every call (planning them took a fifth of their time on the server, unprepared).

extension PostgresEventStore {
    /// Completes deliveries in a handler's transaction, those `claim` still holds, answering a row for each: a
    /// delivery without one is stale, and the transaction rolls back.
    struct CompleteHeld: PostgresPreparedStatement {
        static let name = "mosaic_complete_held"
        static let sql = """
            UPDATE mosaic_delivery
            SET state = 'done', completed_at = now(), claimed_until = NULL, claim = NULL, last_error = NULL
            WHERE id = ANY($1::bigint[]) AND claim = $2::uuid AND state = 'pending'
            RETURNING id
            """

        let completion: DeliveryCompletion

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(completion.deliveries)
            bindings.append(completion.claim)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }

    /// Stores events with a pending delivery for each handler of each one's type, in one statement (so all of
    /// them, or none); the deliveries are numbered in the events' order.
    struct Append: PostgresPreparedStatement {
        static let name = "mosaic_append"
        static let sql = """
            WITH event AS (
                INSERT INTO mosaic_event (id, event_type, payload, sender)
                SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[])
                RETURNING id, event_type)
            INSERT INTO mosaic_delivery (event_id, subscriber)
            SELECT event.id, handler.subscriber
            FROM event JOIN mosaic_event_handler handler ON handler.event_type = event.event_type
                JOIN unnest($1::uuid[]) WITH ORDINALITY AS batch(id, position) ON batch.id = event.id
            ORDER BY batch.position
            """

        let events: [OutboxEvent]

        init(_ events: [OutboxEvent]) { self.events = events }

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(events.map(\.id))
            bindings.append(events.map(\.type))
            bindings.append(events.map { String(decoding: $0.payload, as: UTF8.self) })
            bindings.append(events.map(\.sender.rawValue))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }

    /// Claims up to `limit` of `subscriber`'s due deliveries, the earliest due first, through the index of pending
    /// ones (`mosaic_delivery_next`): never reading the done ones kept for the retention.
    struct Claim: PostgresPreparedStatement {
        static let name = "mosaic_claim"
        static let sql = """
            UPDATE mosaic_delivery delivery
            SET attempts = delivery.attempts + 1, claimed_until = now() + make_interval(secs => $3::float8),
                claim = $4::uuid
            FROM mosaic_event event
            WHERE delivery.id IN (
                SELECT id FROM mosaic_delivery
                WHERE subscriber = $1::text AND state = 'pending' AND due_at <= now()
                    AND (claimed_until IS NULL OR claimed_until < now())
                ORDER BY due_at, id LIMIT $2::bigint FOR UPDATE SKIP LOCKED)
                AND event.id = delivery.event_id
            RETURNING delivery.id, event.id, event.event_type, event.payload, event.sender, event.published_at,
                delivery.attempts, delivery.due_at
            """

        let subscriber: String
        let limit: Int
        let lease: Duration
        let claim: UUID

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(subscriber)
            bindings.append(limit)
            bindings.append(lease.seconds)
            bindings.append(claim)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }

    /// Records `deliveries` done, those still held by `claim`; answers a row for each.
    struct Complete: PostgresPreparedStatement {
        static let name = "mosaic_complete"
        static let sql = """
            UPDATE mosaic_delivery
            SET state = 'done', completed_at = now(), claimed_until = NULL, claim = NULL, last_error = NULL
            WHERE id = ANY($1::bigint[]) AND claim = $2::uuid AND state = 'pending'
            RETURNING id
            """

        let deliveries: [Int64]
        let claim: UUID

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(deliveries)
            bindings.append(claim)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }
}
