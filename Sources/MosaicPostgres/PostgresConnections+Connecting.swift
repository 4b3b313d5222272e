internal import Foundation
internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

extension PostgresConnections {
    /// Records that this instance is alive now (its row in `mosaic_instance`, made again should it be gone), and
    /// that the durable handlers it runs ran now: what tells a handler nothing runs any more from one that runs.
    var seen: PostgresQuery {
        """
        WITH seen AS (
            INSERT INTO mosaic_instance (id) VALUES (\(instance)) ON CONFLICT (id) DO UPDATE SET seen_at = now())
        UPDATE mosaic_event_handler SET last_run_at = now()
        WHERE subscriber IN (SELECT subscriber FROM mosaic_event_handler_instance WHERE instance = \(instance))
        """
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
}

#if canImport(Darwin)
    /// The option that sets how long a socket is idle before its first keepalive probe.
    private let keepaliveIdle = TCP_KEEPALIVE
#else
    /// The option that sets how long a socket is idle before its first keepalive probe.
    private let keepaliveIdle = TCP_KEEPIDLE
#endif
