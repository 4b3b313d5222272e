internal import Logging
internal import Mosaic
internal import MosaicKernel
internal import NIOCore
internal import PostgresNIO
internal import Synchronization

/// The connection that listens for every instance's changes (`LISTEN mosaic_state`, `mosaic_policy` and
/// `mosaic_delivery`), and the watchers it tells.
///
/// A connection can go silent without closing (a stopped server, a network that drops packets), and PostgreSQL
/// never replays a notification missed meanwhile. So the listener proves its connection alive with a heartbeat, a
/// query every ``heartbeat`` that must answer within the same time, and closes it when one does not. When the
/// connection drops it connects again, backing off up to five seconds, and tells every watcher to read again what
/// it holds; every ``resynchronizeEvery`` heartbeats it does so anyway. A row notified as changed that cannot be
/// read then is read again at the next heartbeat. Meanwhile the pool is probed with a query of its own, so that
/// ``checks()`` reports how storage stands even when no module writes.
final class PostgresListener: Sendable {
    struct State {
        var stateWatchers: [Int: @Sendable (StoredStateChange) -> Void] = [:]
        var policyWatchers: [Int: @Sendable () -> Void] = [:]
        var deliveryWatchers: [Int: @Sendable (String) -> Void] = [:]
        var nextWatcher = 0
        var connection: PostgresConnection?
        var reconnecting: Task<Void, Never>?
        var stopped = false
        /// When the listening connection last answered (its `LISTEN`s, or a heartbeat).
        var alive: ContinuousClock.Instant?
        /// When the pool's probe whose query has not ended yet began.
        var probing: ContinuousClock.Instant?
        /// Why the last probe found the server unable to serve (no answer, or an answer that it cannot serve now),
        /// until a probe succeeds: a read that succeeds meanwhile (a read-only standby takes reads) does not make
        /// storage pass while every write fails. `since`: when the probes began to fail, which is when storage last
        /// passed, though reads may have succeeded since.
        var probeFailure: (message: String, since: ContinuousClock.Instant)?
        /// The number of the newest probe: only its outcome sets ``probeFailure``, not a slower earlier one's.
        var probes = 0
        /// The server process of the listening connection, for tests that stop it.
        var backend: Int32?
        /// Keys notified as changed whose rows could not be read then, with the newest revision notified: read
        /// again at the next heartbeat.
        var unread: [String: Int64] = [:]
    }

    let connections: PostgresConnections
    let state = Locked(State())
    /// How often the listening connection proves itself alive, and how long each proof may take.
    let heartbeat: Duration
    /// Watchers read everything again every this many heartbeats, in case a notification was lost unnoticed.
    static let resynchronizeEvery = 12

    /// The rows notified as changed, read together when notifications arrive while a read is under way.
    private let changedRows: GroupCommit<String, (saved: SavedState, revision: Int64)?>

    init(connections: PostgresConnections, heartbeat: Duration) {
        self.connections = connections
        self.heartbeat = heartbeat
        changedRows = GroupCommit(limit: 500, row: \.self) { ids in
            let rows = try await PostgresStateStore.read(ids, on: connections)
            return ids.map { rows[$0] }
        }
    }

    /// What the listener did, for tests that wait for it: the newest 64 are kept for whoever reads.
    let events = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))

    enum Event: Sendable, Equatable {
        /// The connection listens again (after it was lost, or could not be made at start); watchers were told to
        /// read again.
        case listening
        /// A heartbeat was answered.
        case alive
        /// A heartbeat got no answer in time; the connection was closed.
        case silent
        /// A probe of the pool answered (`true`) or did not.
        case probed(answered: Bool)
        /// A row notified as changed could not be read; the next heartbeat reads it again.
        case unreadChange
    }

    /// The longest a change on another instance can take to reach this one while ``checks()`` pass: a heartbeat's
    /// wait and its answer, the reconnection, and the read, with a heartbeat to spare.
    var bound: Duration { heartbeat * 3 }

    /// Starts listening; returns once the first connection listens (or could not, in which case it keeps trying
    /// in the background and watchers resynchronize when it succeeds).
    func start() async {
        let listening = await listen()
        let task = Task { await self.keepListening(connected: listening) }
        state.withLock { $0.reconnecting = task }
    }

    /// Stops listening and closes the connection.
    func stop() async {
        let (connection, task) = state.withLock { state in
            state.stopped = true
            return (state.connection, state.reconnecting)
        }
        task?.cancel()
        try? await connection?.close()
        await task?.value
        events.continuation.finish()
    }

    /// Tells `onChange` of every change of a state row, until the watch is cancelled.
    func watchState(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.stateWatchers[state.nextWatcher] = onChange
            return state.nextWatcher
        }
        return StoreWatch { [weak self] in self?.state.withLock { _ = $0.stateWatchers.removeValue(forKey: id) } }
    }

    /// Tells `onChange` whenever a policy decision may have changed, until the watch is cancelled.
    func watchPolicy(_ onChange: @escaping @Sendable () -> Void) -> StoreWatch {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.policyWatchers[state.nextWatcher] = onChange
            return state.nextWatcher
        }
        return StoreWatch { [weak self] in self?.state.withLock { _ = $0.policyWatchers.removeValue(forKey: id) } }
    }

    /// Tells `onAppend` the handler's name whenever a delivery became pending, until the watch is cancelled.
    func watchDeliveries(_ onAppend: @escaping @Sendable (String) -> Void) -> StoreWatch {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.deliveryWatchers[state.nextWatcher] = onAppend
            return state.nextWatcher
        }
        return StoreWatch { [weak self] in self?.state.withLock { _ = $0.deliveryWatchers.removeValue(forKey: id) } }
    }

    /// Connects and listens; the connection, or `nil` when that failed (logged).
    private func listen() async -> PostgresConnection? {
        var made: PostgresConnection?
        do {
            let connection = try await connections.connect().get()
            made = connection
            connection.addListener(channel: "mosaic_state") { [weak self] _, notification in
                self?.stateChanged(notification.payload)
            }
            connection.addListener(channel: "mosaic_policy") { [weak self] _, _ in self?.policyChanged() }
            connection.addListener(channel: "mosaic_delivery") { [weak self] _, notification in
                guard let self else { return }
                for watcher in state.withLock({ Array($0.deliveryWatchers.values) }) { watcher(notification.payload) }
            }
            // Each within a heartbeat, as the heartbeats are: a server that stops answering here must not hold the
            // listener either.
            for channel in ["mosaic_state", "mosaic_policy", "mosaic_delivery"] {
                _ = try await connections.deadlined("LISTEN \(unescaped: channel)", on: connection, within: heartbeat)
                    .get()
            }
            let backend = try await connections.deadlined(
                "SELECT pg_backend_pid()", on: connection, within: heartbeat
            ).get().rows.first?.decode(Int32.self)
            let stopped = state.withLock { state in
                if !state.stopped {
                    state.backend = backend
                    state.connection = connection
                    state.alive = .now
                }
                return state.stopped
            }
            if stopped { try? await connection.close() }
            return stopped ? nil : connection
        } catch {
            connections.logger.warning(
                "cannot listen for other instances' changes; trying again",
                metadata: ["database": "\(connections.url)", "error": "\(String(reflecting: error))"])
            try? await made?.close()
            return nil
        }
    }

    /// Heartbeats the connection until it drops or goes silent, then connects again (backing off), and
    /// resynchronizes every watcher.
    private func keepListening(connected: PostgresConnection?) async {
        var connection = connected
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            if let connection {
                await heartbeats(on: connection)
                guard !state.withLock({ $0.stopped }) else { return }
                connections.logger.warning(
                    "lost the connection that listens for other instances' changes; reconnecting",
                    metadata: ["database": "\(connections.url)"])
                delay = .milliseconds(100)
            }
            do {
                try await Task.sleep(for: delay.bounded)
            } catch {
                return
            }
            delay = min(delay * 2, .seconds(5))
            connection = await listen()
            if connection != nil {
                resynchronize()
                events.continuation.yield(.listening)
            }
        }
    }

    /// Proves `connection` alive every ``heartbeat`` until it closes, or closes it when a heartbeat gets no answer
    /// within ``heartbeat``; probes the pool at the same pace, and resynchronizes every ``resynchronizeEvery``.
    private func heartbeats(on connection: PostgresConnection) async {
        var beats = 0
        while !connection.isClosed {
            guard (try? await Task.sleep(for: heartbeat.bounded)) != nil else { return }
            probePool()
            do {
                _ = try await connections.deadlined("SELECT 1", on: connection, within: heartbeat).get()
            } catch {
                guard !connection.isClosed else { return }
                connections.logger.warning(
                    "the connection that listens for other instances' changes did not answer its heartbeat",
                    metadata: ["database": "\(connections.url)", "error": "\(error)"])
                try? await connection.close()
                events.continuation.yield(.silent)
                return
            }
            let unread = state.withLock { state in
                state.alive = .now
                defer { state.unread = [:] }
                return state.unread
            }
            for (id, revision) in unread { readChanged(id, revision: revision) }
            events.continuation.yield(.alive)
            beats += 1
            if beats % Self.resynchronizeEvery == 0 { resynchronize() }
        }
    }

    /// A state row changed: reads it (with the rows notified meanwhile), and tells the watchers its value and
    /// revision. The payload is `revision:key`.
    private func stateChanged(_ payload: String) {
        guard let colon = payload.firstIndex(of: ":"), let revision = Int64(payload[..<colon]) else {
            connections.logger.warning(
                "ignored a malformed mosaic_state notification", metadata: ["payload": "\(payload)"])
            return
        }
        readChanged(String(payload[payload.index(after: colon)...]), revision: revision)
    }

    /// Reads `id`'s row (with the rows notified meanwhile) and tells the watchers its value and revision, or
    /// keeps it for the next heartbeat when it cannot be read now: the change was notified once, and would
    /// otherwise wait for the next resynchronization.
    private func readChanged(_ id: String, revision: Int64) {
        Task {
            let change: StoredStateChange
            do {
                if let row = try await changedRows.submit(id) {
                    change = .changed(id: id, saved: row.saved, revision: row.revision)
                } else {
                    change = .changed(id: id, saved: nil, revision: revision)
                }
            } catch {
                connections.logger.warning(
                    "could not read a changed state row; reading it again at the next heartbeat",
                    metadata: ["key": "\(id)", "error": "\(error)"])
                state.withLock { $0.unread[id] = max($0.unread[id] ?? revision, revision) }
                events.continuation.yield(.unreadChange)
                return
            }
            for watcher in state.withLock({ Array($0.stateWatchers.values) }) { watcher(change) }
        }
    }

    private func policyChanged() {
        Task { for watcher in state.withLock({ Array($0.policyWatchers.values) }) { watcher() } }
    }

    /// Tells every watcher to read again what it holds.
    private func resynchronize() {
        let (stateWatchers, policyWatchers) = state.withLock { state in
            (Array(state.stateWatchers.values), Array(state.policyWatchers.values))
        }
        Task {
            for watcher in stateWatchers { watcher(.resynchronize) }
            for watcher in policyWatchers { watcher() }
        }
    }
}
