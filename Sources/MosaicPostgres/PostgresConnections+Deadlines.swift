internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
internal import Synchronization

extension PostgresConnections {
    /// `query` on `connection`, given up on after `timeout` (``queryTimeLimit`` when `nil`): the connection is
    /// closed, and the pool makes a new one.
    ///
    /// The answer is failed at the deadline whether or not closing the connection fails the query: a heartbeat
    /// sent as its connection went silent was seen never to end after the close, which left the listener waiting
    /// for it for good (found by `Scripts/faults.py`).
    func deadlined(
        _ query: PostgresQuery, on connection: PostgresConnection, within timeout: Duration? = nil
    ) -> EventLoopFuture<PostgresQueryResult> {
        deadlined(connection.query(query, logger: logger), on: connection, within: timeout)
    }

    /// `statement` on `connection`, prepared there the first time (the server parses and plans it once per
    /// connection), given up on as ``deadlined(_:on:within:)-(PostgresQuery,_,_)`` is; its rows.
    ///
    /// When the server refuses the statement, the connection is closed: postgres-nio keeps a failed preparation's
    /// error for the connection's life and answers it, unsent, to every later run of the statement there (a
    /// preparation that waited out `lock_timeout` behind a migration would fail on that connection for good).
    func deadlined<Statement: PostgresPreparedStatement>(
        _ statement: Statement, on connection: PostgresConnection, within timeout: Duration? = nil
    ) -> EventLoopFuture<[PostgresRow]> where Statement.Row == PostgresRow {
        // postgres-nio runs prepared statements only through async calls; the deadline settles a future.
        let rows = connection.eventLoop.makeFutureWithTask { [logger] in
            do {
                return try await connection.execute(statement, logger: logger).reduce(into: []) { $0.append($1) }
            } catch let error as PSQLError where error.code == .server {
                // Closed before the pool has the connection back, so that it lends it to no one.
                try? await connection.close()
                throw error
            }
        }
        return deadlined(rows, on: connection, within: timeout)
    }

    /// `answer`, which `connection` gives, or a failure after `timeout` (``queryTimeLimit`` when `nil`) that closes
    /// `connection`.
    private func deadlined<Answer: Sendable>(
        _ answer: EventLoopFuture<Answer>, on connection: PostgresConnection, within timeout: Duration?
    ) -> EventLoopFuture<Answer> {
        let queryTimeLimit = timeout ?? queryTimeLimit
        return settle(
            answer, within: queryTimeLimit,
            expired: PostgresBackendError(
                .timedOut,
                "\(url) did not answer within \(queryTimeLimit), so the connection was closed (the next query makes a "
                    + "new one). Check that the server runs and is reachable.")
        ) { _ = connection.close() as EventLoopFuture<Void> }
    }

    /// Waits for `work` at most `timeout` (on an event loop that outlives the pool's); `false` when it was still under
    /// way then, and goes on without the caller.
    func wait(atMost timeout: Duration, for work: @escaping @Sendable () async -> Void) async -> Bool {
        let done = MultiThreadedEventLoopGroup.singleton.next().makeFutureWithTask { await work() }
        let expired = PostgresBackendError(.timedOut, "\(url) did not finish closing within \(timeout)")
        return (try? await settle(done, within: timeout, expired: expired) {}.get()) != nil
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
}

/// Whether a query's outcome was decided: by its answer, or by its deadline, whichever came first.
final class Settled: Sendable {
    private let settled = Atomic(false)

    /// Decides the outcome, `true` only for the first caller.
    func settle() -> Bool {
        settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
