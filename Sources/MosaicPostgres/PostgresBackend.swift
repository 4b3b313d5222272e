public import Logging
public import MosaicKernel
internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
internal import Synchronization

/// One app's PostgreSQL database, shared by all its instances: persisted state keys (a row per key, with a revision
/// every write advances), the entitlement policy, and the outbox of durable events. Each instance connects once, hands ``storage`` to its kernel,
/// and closes the backend after the kernel has shut down:
///
/// ```swift
/// let database = try await PostgresBackend.connect(url: "postgres://ghost@127.0.0.1:5432/ghost")
/// var options = KernelOptions()
/// options.sharedStorage = database.storage
/// let kernel = Kernel(catalog: catalog, host: host, entitlements: .granted(["weather"]), options: options)
/// try await kernel.boot()
/// …
/// await kernel.shutdown()
/// await database.close()
/// ```
///
/// Connecting creates or updates Mosaic's tables (safely when several instances start at once). The backend keeps
/// one connection for queries, reconnecting when it drops, and one that listens for the others' changes; after that
/// one reconnects, every instance reads again what it holds, since PostgreSQL never replays a missed notification.
public final class PostgresBackend: Sendable {
    /// What the kernel keeps here: pass it as `KernelOptions.sharedStorage`.
    public var storage: SharedStorage {
        SharedStorage(state: stateStore, policy: policyStore, events: eventStore, description: url.description)
    }

    let url: PostgresURL
    let connections: PostgresConnections
    private let stateStore: PostgresStateStore
    private let policyStore: PostgresPolicyStore
    private let eventStore: PostgresEventStore
    private let listener: PostgresListener

    private init(url: PostgresURL, connections: PostgresConnections) {
        self.url = url
        self.connections = connections
        listener = PostgresListener(connections: connections)
        stateStore = PostgresStateStore(connections: connections, listener: listener)
        policyStore = PostgresPolicyStore(connections: connections, listener: listener)
        eventStore = PostgresEventStore(connections: connections, listener: listener)
    }

    /// Connects to the database at `url` (see ``PostgresURL``), brings Mosaic's tables up to date, and starts
    /// listening for other instances' changes.
    ///
    /// A query that has no answer after `queryTimeout` fails, and its connection is closed and made again on the
    /// next query: a server that stopped answering, or a connection the network dropped without a word, costs
    /// the callers that long at most, never forever.
    ///
    /// - Throws: ``PostgresBackendError`` when the URL is malformed, the server cannot be reached or refuses the
    ///   login, or the schema cannot be brought up to date; the message names the fix.
    public static func connect(
        url: String, queryTimeout: Duration = .seconds(30), logger: Logger = Logger(label: "mosaic.postgres")
    ) async throws -> PostgresBackend {
        try await connect(
            url: url, queryTimeout: queryTimeout, timer: PostgresConnections.eventLoopTimer, logger: logger)
    }

    /// ``connect(url:queryTimeout:logger:)`` with the timer that expires queries, which tests replace.
    static func connect(
        url: String, queryTimeout: Duration, timer: @escaping PostgresConnections.QueryTimer, logger: Logger
    ) async throws -> PostgresBackend {
        let url = try PostgresURL(url)
        let connections = PostgresConnections(url: url, queryTimeout: queryTimeout, timer: timer, logger: logger)
        do {
            try await connections.migrateSchema()
        } catch {
            await connections.close()
            throw error
        }
        let backend = PostgresBackend(url: url, connections: connections)
        await backend.listener.start()
        return backend
    }

    /// Closes the connections; the kernel using ``storage`` must have shut down first.
    public func close() async {
        await listener.stop()
        await connections.close()
    }
}

/// The backend's connections: one for queries (postgres-nio queues concurrent queries on it), made again when it
/// drops, on an event loop of the backend's own, so that a caller blocked on a query never blocks the loop that
/// answers it.
final class PostgresConnections: Sendable {
    let url: PostgresURL
    let logger: Logger
    let group: MultiThreadedEventLoopGroup
    private let query = Mutex<PostgresConnection?>(nil)
    /// The connection transactions run on, made on the first one.
    private let transactions = Mutex<PostgresConnection?>(nil)
    private let ids = Atomic<Int>(0)
    /// The connections a query's time limit gave up on (few: one per expiry, over the backend's life).
    private let abandoned = Mutex<Set<ObjectIdentifier>>([])

    /// How long a query may go unanswered before its connection is closed.
    let queryTimeout: Duration
    /// Arms each query's time limit.
    let timer: QueryTimer

    /// Runs `expire` on `loop` after `timeout` unless the returned cancel runs first.
    typealias QueryTimer =
        @Sendable (
            _ loop: any EventLoop, _ timeout: Duration, _ expire: @escaping @Sendable () -> Void
        ) -> @Sendable () -> Void

    /// The real timer: a task scheduled on the connection's event loop.
    static let eventLoopTimer: QueryTimer = { loop, timeout, expire in
        let (seconds, attoseconds) = timeout.components
        let task = loop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
            expire()
        }
        return { task.cancel() }
    }

    init(
        url: PostgresURL, queryTimeout: Duration = .seconds(30), timer: @escaping QueryTimer = eventLoopTimer,
        logger: Logger
    ) {
        self.url = url
        self.queryTimeout = queryTimeout
        self.timer = timer
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// A new connection; failing, an error that names what to check.
    func connect() -> EventLoopFuture<PostgresConnection> {
        PostgresConnection.connect(
            on: group.next(), configuration: url.configuration, id: ids.add(1, ordering: .relaxed).newValue,
            logger: logger
        ).map { [self] connection in
            // A new connection may reuse the address of one given up on and freed since.
            abandoned.withLock { _ = $0.remove(ObjectIdentifier(connection)) }
            return connection
        }.flatMapErrorThrowing { [url] error in
            throw PostgresBackendError(
                "Cannot connect to \(url): \(String(reflecting: error)). Check that the server runs and the URL's "
                    + "user, password and database are right.")
        }
    }

    /// Runs `query` on the query connection and waits for its rows, blocking the caller (for the kernel's
    /// synchronous state calls). Never called on the backend's event loop.
    func run(_ query: PostgresQuery) throws -> [PostgresRow] {
        do {
            return try deadlined(query, on: queryConnection()).wait().rows
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw PostgresBackendError("\(url) answered: \(String(reflecting: error))")
        }
    }

    /// Runs `query` on the query connection.
    func run(_ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            let connection = try await queryConnection()
            return try await deadlined(query, on: connection).get().rows
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw PostgresBackendError("\(url) answered: \(String(reflecting: error))")
        }
    }

    /// Runs `body` in a transaction on a connection of its own (transactions of this instance take turns on
    /// it), blocking the caller; commits when `body` returns, rolls back when it throws.
    func transaction<R>(_ body: (PostgresConnection) throws -> R) throws -> R {
        try transactions.withLock { connection in
            do {
                let open: PostgresConnection
                if let current = connection, isUsable(current) {
                    open = current
                } else {
                    open = try connect().wait()
                    connection = open
                }
                _ = try deadlined("BEGIN", on: open).wait()
                do {
                    let result = try body(open)
                    _ = try deadlined("COMMIT", on: open).wait()
                    return result
                } catch {
                    if (try? deadlined("ROLLBACK", on: open).wait()) == nil {
                        // The transaction's state is unknown: a new connection starts clean.
                        _ = open.close() as EventLoopFuture<Void>
                    }
                    throw error
                }
            } catch let error as PostgresBackendError {
                throw error
            } catch let error as PostgresConflict {
                throw error
            } catch {
                throw PostgresBackendError("\(url) answered: \(String(reflecting: error))")
            }
        }
    }

    /// `query` on `connection`, given up on after ``queryTimeout``: the connection is closed (the query then
    /// fails, with an error saying why) and the next query connects again.
    func deadlined(_ query: PostgresQuery, on connection: PostgresConnection) -> EventLoopFuture<PostgresQueryResult> {
        let expired = Expiry()
        let answer = connection.query(query, logger: logger)
        let cancel = timer(answer.eventLoop, queryTimeout) { [self] in
            expired.expire()
            // Marked before closing: a query arriving while the close is under way must not pick it up.
            abandoned.withLock { _ = $0.insert(ObjectIdentifier(connection)) }
            _ = connection.close() as EventLoopFuture<Void>
        }
        answer.whenComplete { _ in cancel() }
        return answer.flatMapErrorThrowing { [url, queryTimeout] error in
            guard expired.hasExpired else { throw error }
            throw PostgresBackendError(
                "\(url) did not answer within \(queryTimeout), so the connection was closed (the next query makes a "
                    + "new one). Check that the server runs and is reachable.")
        }
    }

    /// Whether `connection` can take a query: not closed, and not given up on by a time limit (its close may still
    /// be under way).
    private func isUsable(_ connection: PostgresConnection) -> Bool {
        !connection.isClosed && !abandoned.withLock { $0.contains(ObjectIdentifier(connection)) }
    }

    /// The open query connection, connecting (and waiting) when there is none.
    private func queryConnection() throws -> PostgresConnection {
        try query.withLock { connection in
            if let open = connection, isUsable(open) { return open }
            let fresh = try connect().wait()
            connection = fresh
            return fresh
        }
    }

    private func queryConnection() async throws -> PostgresConnection {
        if let open = query.withLock({ $0 }), isUsable(open) { return open }
        let fresh = try await connect().get()
        let (kept, extra) = query.withLock { connection -> (PostgresConnection, PostgresConnection?) in
            if let open = connection, isUsable(open) { return (open, fresh) }
            connection = fresh
            return (fresh, nil)
        }
        if let extra { try? await extra.close() }
        return kept
    }

    /// Creates or updates Mosaic's tables, in one transaction that holds the schema's advisory lock: an instance
    /// starting at the same time waits, then finds the steps applied.
    func migrateSchema() async throws {
        let connection = try await connect().get()
        var failure: (any Error)?
        do {
            try await connection.withTransaction(logger: logger) { connection in
                _ = try await connection.query(
                    "SELECT pg_advisory_xact_lock(\(PostgresSchema.lockKey))", logger: logger)
                _ = try await connection.query(
                    "CREATE TABLE IF NOT EXISTS mosaic_schema (version integer NOT NULL)", logger: logger)
                var applied = 0
                for try await version in try await connection.query(
                    "SELECT version FROM mosaic_schema", logger: logger
                ).decode(Int.self) {
                    applied = max(applied, version)
                }
                guard applied <= PostgresSchema.steps.count else {
                    throw PostgresBackendError(
                        "\(url) has Mosaic's tables at version \(applied), newer than this Mosaic knows "
                            + "(\(PostgresSchema.steps.count)). Run the newer app version, or a database of its own.")
                }
                for step in PostgresSchema.steps.dropFirst(applied) {
                    for statement in step {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                _ = try await connection.query("DELETE FROM mosaic_schema", logger: logger)
                _ = try await connection.query(
                    "INSERT INTO mosaic_schema (version) VALUES (\(PostgresSchema.steps.count))", logger: logger)
            }
        } catch let error as PostgresTransactionError where error.closureError is PostgresBackendError {
            failure = error.closureError
        } catch {
            failure = PostgresBackendError(
                "Mosaic's tables in \(url) could not be created or updated: \(String(reflecting: error)). Check that "
                    + "the user may create tables in the database.")
        }
        try? await connection.close()
        if let failure { throw failure }
    }

    /// Closes the connections and stops the event loop.
    func close() async {
        let open: [PostgresConnection?] = [
            query.withLock { connection -> PostgresConnection? in
                defer { connection = nil }
                return connection
            },
            transactions.withLock { connection -> PostgresConnection? in
                defer { connection = nil }
                return connection
            },
        ]
        for connection in open { try? await connection?.close() }
        try? await group.shutdownGracefully()
    }
}

/// Whether a query's deadline passed.
private final class Expiry: Sendable {
    private let expired = Atomic(false)
    var hasExpired: Bool { expired.load(ordering: .acquiring) }
    func expire() { expired.store(true, ordering: .releasing) }
}
