internal import Foundation
internal import MosaicKernel
internal import PostgresNIO

// The state's statements that run for every write and every change another instance makes: prepared, so that each
// connection has the server parse and plan them once (planning cost the server more than running them, unprepared).

extension PostgresStateStore {
    /// Saves each of the rows (of distinct keys) only when it is still at the revision its writer read, in one
    /// statement; answers the saved rows' keys and new revisions (a row that lost its race is not among them).
    struct CompareAndSet: PostgresPreparedStatement {
        static let name = "mosaic_compare_and_set"
        static let sql = """
            WITH written AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[])
                    AS written(id, value, version, revision)),
            updated AS (
                UPDATE mosaic_state kept SET value = written.value, version = written.version FROM written
                WHERE written.revision >= 0 AND kept.id = written.id AND kept.revision = written.revision
                RETURNING kept.id, kept.revision),
            inserted AS (
                INSERT INTO mosaic_state (id, value, version, revision)
                SELECT id, value, version, 0 FROM written WHERE written.revision < 0
                ON CONFLICT (id) DO NOTHING RETURNING id, revision)
            SELECT id, revision FROM updated UNION ALL SELECT id, revision FROM inserted
            """

        let rows: [StateRow]

        init(_ rows: [StateRow]) { self.rows = rows }

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(rows.map(\.id))
            bindings.append(rows.map { PostgresStateStore.text($0.data) })
            bindings.append(rows.map(\.version))
            // Revisions start at 1, so -1 stands for "no row yet" (an array element cannot be NULL here).
            bindings.append(rows.map { $0.revision ?? -1 })
            return bindings
        }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }

    /// The rows of the keys that exist.
    struct Read: PostgresPreparedStatement {
        static let name = "mosaic_read_state"
        static let sql = "SELECT id, value, version, revision FROM mosaic_state WHERE id = ANY($1::text[])"

        let ids: [String]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(ids)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }
}
