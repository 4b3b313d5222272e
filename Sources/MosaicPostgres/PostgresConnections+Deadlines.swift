internal import NIOCore
internal import PostgresNIO
internal import Synchronization

extension PostgresConnections {
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
}

/// Whether a query's outcome was decided: by its answer, or by its deadline, whichever came first.
final class Settled: Sendable {
    private let settled = Atomic(false)

    /// Decides the outcome, `true` only for the first caller.
    func settle() -> Bool {
        settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
