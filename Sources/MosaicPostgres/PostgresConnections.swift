internal import Foundation
internal import Logging
internal import Mosaic
internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
internal import Synchronization

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
    private let running: Locked<Task<Void, Never>?>
    /// Numbers the connections made for listening.
    let ids = Atomic<Int>(0)

    /// How long a query may go unanswered before its connection is closed.
    let queryTimeLimit: Duration
    /// Arms each query's time limit.
    let timer: QueryTimer

    /// Runs `expire` on `loop` after `timeout` unless the returned cancel runs first.
    typealias QueryTimer =
        @Sendable (
            _ loop: any EventLoop, _ timeout: Duration, _ expire: @escaping @Sendable () -> Void
        ) -> @Sendable () -> Void

    /// The real timer: a task scheduled on the connection's event loop.
    static let eventLoopTimer: QueryTimer = { loop, timeout, expire in
        let task = loop.scheduleTask(in: .nanoseconds(timeout.nanosecondsClamped)) {
            expire()
        }
        return { task.cancel() }
    }

    /// At most this many connections in the pool: enough for the writes of many keys at once, few for a server.
    static let maximumPooledConnections = 8

    init(
        url: PostgresURL, queryTimeLimit: Duration = .seconds(30), timer: @escaping QueryTimer = eventLoopTimer,
        logger: Logger
    ) {
        self.url = url
        self.queryTimeLimit = queryTimeLimit
        self.timer = timer
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = url.poolConfiguration
        configuration.options.maximumConnections = Self.maximumPooledConnections
        configuration.options.minimumConnections = 1
        pool = PostgresClient(configuration: configuration, eventLoopGroup: group, backgroundLogger: logger)
        let pool = pool
        running = Locked(Task { await pool.run() })
    }

    /// Runs `query` on a connection of the pool and returns its rows.
    ///
    /// The pool can lend a connection that a query given up on (``deadlined(_:on:)``) has just closed, before it
    /// learns of the close; the query then fails unsent, so it runs again on another connection, once.
    ///
    /// The query is given up on after `timeout` (the backend's query time limit when `nil`).
    func run(_ query: PostgresQuery, within timeout: Duration? = nil) async throws -> [PostgresRow] {
        try await run { connection in self.deadlined(query, on: connection, within: timeout).map(\.rows) }
    }

    /// Runs `statement` as ``run(_:within:)-(PostgresQuery,_)`` runs a query, prepared on each connection the
    /// first time: for the statements run for every write and event, which the server would otherwise parse and plan
    /// at every call.
    func run<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [PostgresRow]
    where Statement.Row == PostgresRow {
        try await run { connection in self.deadlined(statement, on: connection) }
    }

    private func run(
        _ send: @escaping @Sendable (PostgresConnection) -> EventLoopFuture<[PostgresRow]>
    ) async throws -> [PostgresRow] {
        @Sendable func attempt() async throws -> [PostgresRow] {
            try await pool.withConnection { connection in
                do {
                    return try await send(connection).get()
                } catch let error as PostgresBackendError where error.code == .timedOut {
                    try await Self.untilClosed(connection, error)
                }
            }
        }
        do {
            let rows = try await Self.uncancelled {
                do {
                    return try await attempt()
                } catch let error as PSQLError where error.code == .clientClosedConnection {
                    return try await attempt()
                }
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
    func transaction<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws
        -> R
    {
        do {
            let result = try await Self.uncancelled {
                try await self.pool.withConnection { connection in
                    do {
                        _ = try await self.deadlined("BEGIN", on: connection).get()
                        let result = try await body(connection)
                        _ = try await self.deadlined("COMMIT", on: connection).get()
                        return result
                    } catch let error as PostgresBackendError where error.code == .timedOut {
                        try await Self.untilClosed(connection, error)
                    } catch {
                        if (try? await self.deadlined("ROLLBACK", on: connection).get()) == nil {
                            try? await connection.close()
                        }
                        throw error
                    }
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
        } catch let error as PostgresStale {
            recordAnswer()
            throw error
        } catch {
            let answered = Self.answered(error, by: url)
            recordFailure(answered)
            throw answered
        }
    }

    /// `work`'s outcome, run in a task of its own that the caller's cancellation does not reach. The pool refuses a
    /// cancelled task's lease at once, unsent: the kernel's last writes as a module or the instance stops (handing
    /// back the deliveries it claimed, which would otherwise stay locked for a whole lease) run in cancelled tasks,
    /// and the refusal would read as storage unreachable. Every query is bounded by its deadline instead.
    private static func uncancelled<R: Sendable>(_ work: @escaping @Sendable () async throws -> R) async throws -> R {
        try await Task { try await work() }.value
    }

    /// Throws `error`, a deadline, once `connection` is closed: handed back to the pool before, it could be lent to
    /// the next query before the pool learns of the close, and that query would then wait out a whole time limit
    /// for an answer that never comes. (Over TLS, the close may wait a few seconds for the silent server's goodbye.)
    private static func untilClosed(_ connection: PostgresConnection, _ error: PostgresBackendError) async throws
        -> Never
    {
        // The deadline closed it already; closing again is harmless and makes sure.
        try? await connection.close()
        try? await connection.closeFuture.get()
        throw error
    }

    /// `error`, from postgres-nio, as the backend's error: `failed` when the server sent it, `unreachable` when no
    /// connection could be had or kept, or when the server answered that it cannot serve now (``cannotServe(_:)``),
    /// so that readiness fails rather than passing on a server that refuses every write.
    static func answered(_ error: any Error, by url: PostgresURL) -> PostgresBackendError {
        guard let error = error as? PSQLError, error.code == .server else {
            return PostgresBackendError(
                .unreachable,
                "\(url) could not be reached: \(String(reflecting: error)). Check that the server runs and is "
                    + "reachable.")
        }
        let state = error.serverInfo?[.sqlState] ?? ""
        guard let fix = Self.cannotServe(state) else {
            return PostgresBackendError(.failed, "\(url) answered: \(String(reflecting: error))")
        }
        return PostgresBackendError(
            .unreachable,
            "\(url) answered that it cannot serve now (SQLSTATE \(state)): \(String(reflecting: error)). \(fix)")
    }

    /// What to do when SQLSTATE `state` says the server cannot serve this app now, whatever the statement; `nil`
    /// when the error concerns the statement alone.
    static func cannotServe(_ state: String) -> String? {
        switch state {
        case "25006":
            "It is a standby, which takes no writes: point the app at the primary server."
        case "57P01", "57P02", "57P03":
            "It is shutting down or starting, or ended this connection; the next query connects again."
        case _ where state.hasPrefix("53"), "58000", "58030":
            "It is out of connections, memory or disk, or its storage failed: check the server."
        default:
            nil
        }
    }

    /// When the server last answered a query of the pool, and the failure since, if any.
    struct Answers {
        var lastAnswer: ContinuousClock.Instant?
        /// A query that failed without the server's answer (no connection, no answer in time), or with an answer
        /// that it cannot serve now, after the last answer.
        var lastFailure: (at: ContinuousClock.Instant, error: String)?
    }

    private let answerLog = Locked(Answers())

    func answers() -> Answers { answerLog.withLock { $0 } }

    private func recordAnswer() {
        answerLog.withLock { $0 = Answers(lastAnswer: .now, lastFailure: nil) }
    }

    /// Records `error`: as a failure to answer, unless the server sent an error about the statement alone (the
    /// server answered, then).
    func recordFailure(_ error: PostgresBackendError) {
        if error.code == .failed {
            recordAnswer()
            return
        }
        answerLog.withLock { $0.lastFailure = (.now, "\(error)") }
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
