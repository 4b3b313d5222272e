internal import Foundation
public import Logging
public import MosaicKernel
internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

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
/// a pool of connections for queries (a query waiting on a lock holds up no other), and one that listens for the
/// others' changes; after that one reconnects, every instance reads again what it holds, since PostgreSQL never
/// replays a missed notification.
public final class PostgresBackend: Sendable {
    /// What the kernel keeps here: pass it as `KernelOptions.sharedStorage`.
    public var storage: SharedStorage {
        SharedStorage(
            state: stateStore, policy: policyStore, events: eventStore, description: url.description,
            checks: { [listener] in listener.checks() })
    }

    let url: PostgresURL
    let connections: PostgresConnections
    private let stateStore: PostgresStateStore
    private let policyStore: PostgresPolicyStore
    private let eventStore: PostgresEventStore
    let listener: PostgresListener
    let retention: PostgresRetention

    private init(url: PostgresURL, connections: PostgresConnections, heartbeat: Duration, retention: Duration) {
        self.url = url
        self.connections = connections
        self.retention = PostgresRetention(connections: connections, retention: retention)
        listener = PostgresListener(connections: connections, heartbeat: heartbeat)
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
    ///
    /// The connection that listens for the other instances' changes proves itself alive every `heartbeat` (a query
    /// that must answer within as long), and is made again when it does not: a change on another instance reaches
    /// this one within three heartbeats (15 s by default) of its commit, or ``storage``'s readiness checks fail
    /// meanwhile, so that the host reports itself not ready instead of serving what the others no longer serve.
    ///
    /// Deliveries of durable events that are done, events no delivery needs any more, and unreadable state rows
    /// are deleted once older than `retention` (24 hours by default, checked every hour by one instance at a
    /// time); parked and abandoned deliveries stay until an operator resubmits them.
    public static func connect(
        url: String, queryTimeout: Duration = .seconds(30), heartbeat: Duration = .seconds(5),
        retention: Duration = .seconds(86_400), logger: Logger = Logger(label: "mosaic.postgres")
    ) async throws -> PostgresBackend {
        try await connect(
            url: url, queryTimeout: queryTimeout, heartbeat: heartbeat, retention: retention,
            timer: PostgresConnections.eventLoopTimer, logger: logger)
    }

    /// ``connect(url:queryTimeout:heartbeat:retention:logger:)`` with the timer that expires queries, and whether
    /// pruning runs on its own, which tests replace.
    static func connect(
        url: String, queryTimeout: Duration, heartbeat: Duration = .seconds(5), retention: Duration = .seconds(86_400),
        prunes: Bool = true, timer: @escaping PostgresConnections.QueryTimer, logger: Logger
    ) async throws -> PostgresBackend {
        guard heartbeat > .zero else {
            throw PostgresBackendError(
                .invalidConfiguration, "The heartbeat must be longer than zero (it is \(heartbeat)); 5 s is usual.")
        }
        guard retention >= .zero else {
            throw PostgresBackendError(
                .invalidConfiguration, "The retention cannot be negative (it is \(retention)); 24 hours is usual.")
        }
        let url = try PostgresURL(url)
        let connections = PostgresConnections(url: url, queryTimeout: queryTimeout, timer: timer, logger: logger)
        do {
            try await connections.migrateSchema()
            _ = try await connections.run(connections.seen)
        } catch {
            await connections.close()
            throw error
        }
        let backend = PostgresBackend(
            url: url, connections: connections, heartbeat: heartbeat, retention: retention)
        await backend.listener.start()
        if prunes { backend.retention.start() }
        return backend
    }

    /// Closes the connections; the kernel using ``storage`` must have shut down first. The instance leaves the
    /// database's list of live instances: the durable handlers it ran are no longer counted as running here.
    public func close() async {
        await retention.stop()
        await listener.stop()
        _ = try? await connections.run(
            "DELETE FROM mosaic_instance WHERE id = \(connections.instance)", within: listener.heartbeat)
        await connections.close()
    }
}

/// The backend's connections: a pool for queries and transactions (postgres-nio's `PostgresClient`), so that a
/// query waiting on a lock holds up no other, and connections of its own for listening; all on an event loop of the
/// backend's own. Nothing here blocks a thread: every call is awaited.
final class PostgresConnections: Sendable {
    let url: PostgresURL
    let logger: Logger
    let group: MultiThreadedEventLoopGroup
    /// The pool every query and transaction leases a connection from.
    let pool: PostgresClient
    /// This instance, in `mosaic_instance`: seen at every heartbeat, and named by the durable handlers it runs.
    let instance = UUID()
    /// Runs the pool until ``close()``.
    private let running: Mutex<Task<Void, Never>?>
    private let ids = Atomic<Int>(0)

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

    /// At most this many connections in the pool: enough for the writes of many keys at once, few for a server.
    static let maximumPooledConnections = 8

    init(
        url: PostgresURL, queryTimeout: Duration = .seconds(30), timer: @escaping QueryTimer = eventLoopTimer,
        logger: Logger
    ) {
        self.url = url
        self.queryTimeout = queryTimeout
        self.timer = timer
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = url.poolConfiguration
        configuration.options.maximumConnections = Self.maximumPooledConnections
        configuration.options.minimumConnections = 1
        pool = PostgresClient(configuration: configuration, eventLoopGroup: group, backgroundLogger: logger)
        let pool = pool
        running = Mutex(Task { await pool.run() })
    }

    /// Records that this instance is alive now (its row in `mosaic_instance`, made again should it be gone).
    var seen: PostgresQuery {
        "INSERT INTO mosaic_instance (id) VALUES (\(instance)) ON CONFLICT (id) DO UPDATE SET seen_at = now()"
    }

    /// A new connection of its own (for listening), over a socket with TCP keepalive (``keepalive(on:)``), so that
    /// the operating system too notices a server or network gone without a word; failing, an error that names what
    /// to check.
    func connect() -> EventLoopFuture<PostgresConnection> {
        let loop = group.next()
        let id = ids.add(1, ordering: .relaxed).newValue
        let (configuration, logger) = (url.configuration, logger)
        let connection: EventLoopFuture<PostgresConnection>
        if let host = configuration.host, let port = configuration.port {
            connection = Self.keepalive(on: loop).connect(host: host, port: port).flatMap { [self] channel in
                var established = PostgresConnection.Configuration(
                    establishedChannel: channel, tls: configuration.tls, username: configuration.username,
                    password: configuration.password, database: configuration.database)
                established.options = configuration.options
                // The login has the connection's time limit too: a server that accepts and never answers (stopped
                // with SIGSTOP) must not hold the listener.
                return settle(
                    PostgresConnection.connect(on: loop, configuration: established, id: id, logger: logger),
                    within: .seconds(10),
                    expired: PostgresBackendError(
                        .timedOut, "\(url) accepted a connection and did not answer its login.")
                ) { channel.close(promise: nil) }
            }
        } else {
            connection = PostgresConnection.connect(on: loop, configuration: configuration, id: id, logger: logger)
        }
        return connection.flatMapErrorThrowing { [url] error in
            throw PostgresBackendError(
                .unreachable,
                "Cannot connect to \(url): \(String(reflecting: error)). Check that the server runs and the URL's "
                    + "user, password and database are right.")
        }
    }

    /// A bootstrap whose sockets probe an idle peer after 10 s, every 5 s, and give up after 3 probes unanswered.
    static func keepalive(on loop: any EventLoop) -> ClientBootstrap {
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(.init(rawValue: CInt(keepaliveIdle))), value: 10)
            .channelOption(.tcpOption(.init(rawValue: CInt(TCP_KEEPINTVL))), value: 5)
            .channelOption(.tcpOption(.init(rawValue: CInt(TCP_KEEPCNT))), value: 3)
    }

    /// Runs `query` on a connection of the pool and returns its rows.
    ///
    /// The pool can lend a connection that a query given up on (``deadlined(_:on:)``) has just closed, before it
    /// learns of the close; the query then fails unsent, so it runs again on another connection, once.
    ///
    /// The query is given up on after `timeout` (the backend's query timeout when `nil`).
    func run(_ query: PostgresQuery, within timeout: Duration? = nil) async throws -> [PostgresRow] {
        func attempt() async throws -> [PostgresRow] {
            try await pool.withConnection { connection in
                try await self.deadlined(query, on: connection, within: timeout).get().rows
            }
        }
        do {
            let rows: [PostgresRow]
            do {
                rows = try await attempt()
            } catch let error as PSQLError where error.code == .clientClosedConnection {
                rows = try await attempt()
            }
            recordAnswer()
            return rows
        } catch let error as PostgresBackendError {
            recordFailure(error)
            throw error
        } catch {
            let answered = Self.answered(error, by: url)
            recordFailure(answered)
            throw answered
        }
    }

    /// Runs `body` in a transaction on a connection of the pool: commits when `body` returns, rolls back when it
    /// throws (and closes the connection when even that gets no answer, so that it is never reused half-way).
    func transaction<R: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        do {
            let result = try await pool.withConnection { connection in
                _ = try await self.deadlined("BEGIN", on: connection).get()
                do {
                    let result = try await body(connection)
                    _ = try await self.deadlined("COMMIT", on: connection).get()
                    return result
                } catch {
                    if (try? await self.deadlined("ROLLBACK", on: connection).get()) == nil {
                        try? await connection.close()
                    }
                    throw error
                }
            }
            recordAnswer()
            return result
        } catch let error as PostgresBackendError {
            recordFailure(error)
            throw error
        } catch let error as PostgresConflict {
            recordAnswer()
            throw error
        } catch {
            let answered = Self.answered(error, by: url)
            recordFailure(answered)
            throw answered
        }
    }

    /// `error`, from postgres-nio, as the backend's error: `failed` when the server sent it, `unreachable` when no
    /// connection could be had or kept.
    static func answered(_ error: any Error, by url: PostgresURL) -> PostgresBackendError {
        let fromServer = (error as? PSQLError)?.code == .server
        return PostgresBackendError(
            fromServer ? .failed : .unreachable,
            fromServer
                ? "\(url) answered: \(String(reflecting: error))"
                : "\(url) could not be reached: \(String(reflecting: error)). Check that the server runs and is "
                    + "reachable.")
    }

    /// When the server last answered a query of the pool, and the failure since, if any.
    struct Answers {
        var lastAnswer: ContinuousClock.Instant?
        /// A query that failed without the server's answer (no connection, no answer in time) after the last answer.
        var lastFailure: (at: ContinuousClock.Instant, error: String)?
    }

    private let answerLog = Mutex(Answers())

    func answers() -> Answers { answerLog.withLock { $0 } }

    private func recordAnswer() {
        answerLog.withLock { $0 = Answers(lastAnswer: .now, lastFailure: nil) }
    }

    /// Records `error`: as a failure to answer, unless the server sent it (the server answered, then).
    func recordFailure(_ error: PostgresBackendError) {
        if error.code == .failed {
            recordAnswer()
            return
        }
        answerLog.withLock { $0.lastFailure = (.now, "\(error)") }
    }

    /// `query` on `connection`, given up on after `timeout` (``queryTimeout`` when `nil`): the connection is
    /// closed, and the pool makes a new one.
    ///
    /// The answer is failed at the deadline whether or not closing the connection fails the query: a heartbeat
    /// sent as its connection went silent was seen never to end after the close, which left the listener waiting
    /// for it for good (found by `Scripts/faults.py`).
    func deadlined(
        _ query: PostgresQuery, on connection: PostgresConnection, within timeout: Duration? = nil
    ) -> EventLoopFuture<PostgresQueryResult> {
        let queryTimeout = timeout ?? queryTimeout
        return settle(
            connection.query(query, logger: logger), within: queryTimeout,
            expired: PostgresBackendError(
                .timedOut,
                "\(url) did not answer within \(queryTimeout), so the connection was closed (the next query makes a "
                    + "new one). Check that the server runs and is reachable.")
        ) { _ = connection.close() as EventLoopFuture<Void> }
    }

    /// `future`'s result, or `expired` once `timeout` passes without one, after running `expire` (which closes
    /// what the future waits on).
    func settle<Value: Sendable>(
        _ future: EventLoopFuture<Value>, within timeout: Duration, expired: PostgresBackendError,
        expire: @escaping @Sendable () -> Void
    ) -> EventLoopFuture<Value> {
        let settled = Settled()
        let outcome = future.eventLoop.makePromise(of: Value.self)
        let cancel = timer(future.eventLoop, timeout) {
            guard settled.settle() else { return }
            expire()
            outcome.fail(expired)
        }
        future.whenComplete { result in
            guard settled.settle() else { return }
            cancel()
            outcome.completeWith(result)
        }
        return outcome.futureResult
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
                        .schema,
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
                .schema,
                "Mosaic's tables in \(url) could not be created or updated: \(String(reflecting: error)). Check that "
                    + "the user may create tables in the database.")
        }
        try? await connection.close()
        if let failure { throw failure }
    }

    /// Closes the pool and stops the event loop.
    func close() async {
        let task = running.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        try? await group.shutdownGracefully()
    }
}

#if canImport(Darwin)
    /// The option that sets how long a socket is idle before its first keepalive probe.
    private let keepaliveIdle = TCP_KEEPALIVE
#else
    /// The option that sets how long a socket is idle before its first keepalive probe.
    private let keepaliveIdle = TCP_KEEPIDLE
#endif

/// Whether a query's outcome was decided: by its answer, or by its deadline, whichever came first.
final class Settled: Sendable {
    private let settled = Atomic(false)

    /// Decides the outcome, `true` only for the first caller.
    func settle() -> Bool {
        settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
