public import Logging
public import MosaicKernel
internal import PostgresNIO

/// Connects to the PostgreSQL database every instance of one app uses as external storage.
///
/// It keeps persisted state keys (a row per key, with a revision every write advances), the entitlement policy's
/// decisions, and the outbox of durable events. Each instance connects once, hands ``storage`` to its kernel, and
/// closes the backend after the kernel has shut down:
///
/// ```swift
/// let database = try await PostgresBackend.connect(url: "postgres://ghost@127.0.0.1:5432/ghost")
/// var options = KernelOptions()
/// options.externalStorage = database.storage
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
    /// What the kernel keeps here: pass it as `KernelOptions.externalStorage`.
    public var storage: ExternalStorage {
        ExternalStorage(
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
    /// A query that has no answer after `queryTimeLimit` fails, and its connection is closed and made again on the
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
        url: String, queryTimeLimit: Duration = .seconds(30), heartbeat: Duration = .seconds(5),
        retention: Duration = .seconds(86_400), logger: Logger = Logger(label: "mosaic.postgres")
    ) async throws -> PostgresBackend {
        try await connect(
            url: url, queryTimeLimit: queryTimeLimit, heartbeat: heartbeat, retention: retention,
            timer: PostgresConnections.eventLoopTimer, logger: logger)
    }

    /// ``connect(url:queryTimeLimit:heartbeat:retention:logger:)`` with the timer that expires queries, and whether
    /// pruning runs on its own, which tests replace.
    static func connect(
        url: String, queryTimeLimit: Duration, heartbeat: Duration = .seconds(5),
        retention: Duration = .seconds(86_400),
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
        let connections = PostgresConnections(url: url, queryTimeLimit: queryTimeLimit, timer: timer, logger: logger)
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
        _ = try? await connections.run(connections.seen, within: listener.heartbeat)
        _ = try? await connections.run(
            "DELETE FROM mosaic_instance WHERE id = \(connections.instance)", within: listener.heartbeat)
        await connections.close()
    }

    /// Closes the connections as ``close()`` does, waiting for the database at most `timeLimit` (a process that
    /// stops on SIGTERM passes its storage time limit): a server that does not answer by then keeps the instance's
    /// row (it drops out of the list once unseen for the liveness bound), and the closing goes on without the caller.
    public func close(within timeLimit: Duration) async {
        let closing = Task { await close() }
        guard await connections.wait(atMost: timeLimit, for: { await closing.value }) else {
            connections.logger.warning(
                "the database did not answer while the backend closed; stopped waiting for it",
                metadata: ["database": "\(connections.url)", "time-limit": "\(timeLimit)"])
            return
        }
    }
}
