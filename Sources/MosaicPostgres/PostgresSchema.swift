internal import PostgresNIO

/// The tables Mosaic keeps in PostgreSQL, as numbered steps. Each instance applies the steps the database lacks
/// when it connects, inside one transaction that holds an advisory lock, so instances starting together apply each
/// step once, and a crash mid-way leaves the schema as it was.
enum PostgresSchema {
    /// The advisory lock every instance takes while it brings the schema up to date.
    static let lockKey: Int64 = 0x4D6F_7361_6963  // "Mosaic"
    /// How long a migration's step may take, and an instance starting meanwhile wait for its lock: an index built
    /// on a large table takes minutes, far longer than a query is given.
    static let statementLimit = Duration.seconds(600)

    /// The steps, in order, each a list of statements (one statement per query: the extended protocol postgres-nio
    /// speaks takes no more); the database records how many it has (`mosaic_schema.version`). Never edit a step
    /// that has shipped: add one.
    static let steps: [[String]] = [
        // 1: shared state, its parking place, the policy, and the triggers that number and announce changes. The
        // value is JSON kept as text: lossless (jsonb would drop duplicate keys and refuse \u0000) and readable.
        [
            "CREATE SEQUENCE mosaic_state_revision",
            """
            CREATE TABLE mosaic_state (
                id text PRIMARY KEY, value text NOT NULL, version integer NOT NULL, revision bigint NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE mosaic_state_unreadable (
                id text NOT NULL, value text NOT NULL, version integer NOT NULL, reason text NOT NULL,
                kept_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE mosaic_policy (
                entitlement text PRIMARY KEY, granted boolean NOT NULL, decided_at timestamptz NOT NULL DEFAULT now())
            """,
            // Every insert and update, by Mosaic or by hand, gets a new revision from one sequence, so revisions
            // only grow, even across a row parked and written again.
            """
            CREATE FUNCTION mosaic_state_number() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                NEW.revision := nextval('mosaic_state_revision');
                NEW.updated_at := now();
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER mosaic_state_number BEFORE INSERT OR UPDATE ON mosaic_state
                FOR EACH ROW EXECUTE FUNCTION mosaic_state_number()
            """,
            // NOTIFY carries the revision and the key, never the value (8,000 bytes at most, and not replayed).
            """
            CREATE FUNCTION mosaic_state_announce() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    PERFORM pg_notify('mosaic_state', nextval('mosaic_state_revision') || ':' || OLD.id);
                ELSE
                    PERFORM pg_notify('mosaic_state', NEW.revision || ':' || NEW.id);
                END IF;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER mosaic_state_announce AFTER INSERT OR UPDATE OR DELETE ON mosaic_state
                FOR EACH ROW EXECUTE FUNCTION mosaic_state_announce()
            """,
            """
            CREATE FUNCTION mosaic_policy_announce() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('mosaic_policy', '');
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER mosaic_policy_announce AFTER INSERT OR UPDATE OR DELETE ON mosaic_policy
                FOR EACH STATEMENT EXECUTE FUNCTION mosaic_policy_announce()
            """,
        ],
        // 2: the outbox of durable events. Each event is one row; each handler's delivery of it another, made in
        // the same statement as the event from the handlers registered for its type. A delivery is claimed by
        // setting `claimed_until` (FOR UPDATE SKIP LOCKED, so claimers never wait for each other), and is pending
        // until done, parked after its last attempt, or abandoned with its handler's module. Each claim has its own
        // `claim` id, and only its holder may record an outcome, so a claimer whose lease ran out cannot undo the
        // claim of the instance that took the delivery over.
        [
            """
            CREATE TABLE mosaic_event_handler (
                subscriber text PRIMARY KEY, module text NOT NULL, event_type text NOT NULL,
                registered_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE INDEX mosaic_event_handler_type ON mosaic_event_handler (event_type)",
            """
            CREATE TABLE mosaic_event (
                id uuid PRIMARY KEY, event_type text NOT NULL, payload text NOT NULL, sender text NOT NULL,
                published_at timestamptz NOT NULL DEFAULT clock_timestamp())
            """,
            """
            CREATE TABLE mosaic_delivery (
                id bigserial PRIMARY KEY, event_id uuid NOT NULL REFERENCES mosaic_event (id),
                subscriber text NOT NULL,
                state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'parked', 'abandoned')),
                attempts integer NOT NULL DEFAULT 0, due_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                claimed_until timestamptz, claim uuid, last_error text, completed_at timestamptz,
                UNIQUE (event_id, subscriber))
            """,
            "CREATE INDEX mosaic_delivery_due ON mosaic_delivery (subscriber, id) WHERE state = 'pending'",
            "CREATE INDEX mosaic_delivery_undelivered ON mosaic_delivery (id) WHERE state IN ('parked', 'abandoned')",
            // Wakes the handlers' claimers when a delivery becomes pending; the payload is the handler's name.
            """
            CREATE FUNCTION mosaic_delivery_announce() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('mosaic_delivery', NEW.subscriber);
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER mosaic_delivery_announce AFTER INSERT OR UPDATE OF state ON mosaic_delivery
                FOR EACH ROW WHEN (NEW.state = 'pending') EXECUTE FUNCTION mosaic_delivery_announce()
            """,
        ],
        // 3: what pruning looks for (PostgresRetention): deliveries done, events by age, unreadable rows by age.
        [
            "CREATE INDEX mosaic_delivery_done ON mosaic_delivery (completed_at) WHERE state = 'done'",
            "CREATE INDEX mosaic_event_published ON mosaic_event (published_at)",
            "CREATE INDEX mosaic_state_unreadable_kept ON mosaic_state_unreadable (kept_at)",
        ],
        // 4: the instances, each seen at its every heartbeat, and which of them run each durable handler: an
        // uninstall on one instance abandons a handler's deliveries only when no live instance runs it.
        [
            """
            CREATE TABLE mosaic_instance (
                id uuid PRIMARY KEY, started_at timestamptz NOT NULL DEFAULT now(),
                seen_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE mosaic_event_handler_instance (
                subscriber text NOT NULL REFERENCES mosaic_event_handler (subscriber) ON DELETE CASCADE,
                instance uuid NOT NULL REFERENCES mosaic_instance (id) ON DELETE CASCADE,
                PRIMARY KEY (subscriber, instance))
            """,
        ],
        // 5: claims take the earliest due first, as River, Oban and graphile-worker do, through an index that gives
        // that order. Ordered by id alone, a backlog led the planner to walk the primary key, reading every retained
        // done delivery before the pending ones (35 ms a claim past 100,000 rows).
        [
            "CREATE INDEX mosaic_delivery_next ON mosaic_delivery (subscriber, due_at, id) WHERE state = 'pending'",
            "DROP INDEX mosaic_delivery_due",
        ],
        // 6: when an instance last ran each handler (at every heartbeat of the instances that run it): a handler
        // renamed, or whose module left the catalog, is one nothing has run for a while, and its deliveries are
        // abandoned after the host's retention instead of waiting unseen for good.
        [
            "ALTER TABLE mosaic_event_handler ADD COLUMN last_run_at timestamptz NOT NULL DEFAULT now()"
        ],
        // 7: an append of a batch costs one announcement per handler instead of one trigger call per delivery, and
        // no foreign-key check per delivery (together a third of a batch of 100's statement). A delivery is only
        // ever inserted in the statement that inserts its event, and retention deletes an event only once no
        // delivery names it, so the key held by construction what the constraint checked row by row.
        [
            "ALTER TABLE mosaic_delivery DROP CONSTRAINT IF EXISTS mosaic_delivery_event_id_fkey",
            "DROP TRIGGER mosaic_delivery_announce ON mosaic_delivery",
            """
            CREATE FUNCTION mosaic_delivery_announce_added() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('mosaic_delivery', subscriber)
                FROM (SELECT DISTINCT subscriber FROM added WHERE state = 'pending') handler;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER mosaic_delivery_announce_added AFTER INSERT ON mosaic_delivery
                REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mosaic_delivery_announce_added()
            """,
            // A delivery made pending again (resubmitted) is rare: one call for each.
            """
            CREATE TRIGGER mosaic_delivery_announce AFTER UPDATE OF state ON mosaic_delivery
                FOR EACH ROW WHEN (NEW.state = 'pending') EXECUTE FUNCTION mosaic_delivery_announce()
            """,
        ],
    ]
}

extension PostgresConnections {
    /// Creates or updates Mosaic's tables, in one transaction that holds the schema's advisory lock: an instance
    /// starting at the same time waits, then finds the steps applied. Every statement has a time limit: the wait for
    /// the lock and the steps ``PostgresSchema/statementLimit`` (or the query time limit when longer), the rest the
    /// query time limit. A server that stops answering, or another instance's migration that hangs holding the
    /// lock, fails the connect with `timedOut` instead of holding the app's start for good.
    func migrateSchema() async throws {
        let connection = try await connect().get()
        var failure: (any Error)?
        do {
            try await migrateSchema(on: connection)
        } catch let error as PostgresBackendError {
            failure = error
        } catch let error as PSQLError where Self.cannotServe(error.serverInfo?[.sqlState] ?? "") != nil {
            failure = Self.answered(error, by: url)
        } catch {
            failure = PostgresBackendError(
                .schema,
                "Mosaic's tables in \(url) could not be created or updated: \(String(reflecting: error)). Check that "
                    + "the user may create tables in the database.")
        }
        // Closing a connection whose transaction did not commit rolls it back, and lets the lock go.
        try? await connection.close()
        if let failure { throw failure }
    }

    private func migrateSchema(on connection: PostgresConnection) async throws {
        let long = max(queryTimeLimit, PostgresSchema.statementLimit)
        func run(_ query: PostgresQuery, within limit: Duration? = nil) async throws -> PostgresQueryResult {
            try await deadlined(query, on: connection, within: limit).get()
        }
        _ = try await run("BEGIN")
        _ = try await run("SELECT pg_advisory_xact_lock(\(PostgresSchema.lockKey))", within: long)
        _ = try await run("CREATE TABLE IF NOT EXISTS mosaic_schema (version integer NOT NULL)")
        let applied = try await run("SELECT version FROM mosaic_schema").rows.map { try $0.decode(Int.self) }.max() ?? 0
        guard applied >= 0 else {
            throw PostgresBackendError(
                .schema,
                "\(url) has mosaic_schema.version \(applied), which no Mosaic writes. Set it to the number of steps "
                    + "the tables have, or use a database of its own.")
        }
        guard applied <= PostgresSchema.steps.count else {
            throw PostgresBackendError(
                .schema,
                "\(url) has Mosaic's tables at version \(applied), newer than this Mosaic knows "
                    + "(\(PostgresSchema.steps.count)). Run the newer app version, or a database of its own.")
        }
        for step in PostgresSchema.steps.dropFirst(applied) {
            for statement in step {
                _ = try await run(PostgresQuery(unsafeSQL: statement), within: long)
            }
        }
        _ = try await run("DELETE FROM mosaic_schema")
        _ = try await run("INSERT INTO mosaic_schema (version) VALUES (\(PostgresSchema.steps.count))")
        _ = try await run("COMMIT")
    }
}
