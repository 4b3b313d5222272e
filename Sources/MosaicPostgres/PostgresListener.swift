internal import Logging
internal import MosaicKernel
internal import NIOCore
internal import PostgresNIO
internal import Synchronization

/// The connection that listens for every instance's changes (`LISTEN mosaic_state`, `mosaic_policy` and
/// `mosaic_delivery`), and
/// the watchers it tells. When it drops it connects again, backing off up to five seconds, and then tells every
/// watcher to read again what it holds: notifications sent while it was away are gone for good.
final class PostgresListener: Sendable {
    private struct State {
        var stateWatchers: [Int: @Sendable (SharedStateChange) -> Void] = [:]
        var policyWatchers: [Int: @Sendable () -> Void] = [:]
        var deliveryWatchers: [Int: @Sendable (String) -> Void] = [:]
        var nextWatcher = 0
        var connection: PostgresConnection?
        var reconnecting: Task<Void, Never>?
        var stopped = false
    }

    private let connections: PostgresConnections
    private let state = Mutex(State())

    init(connections: PostgresConnections) {
        self.connections = connections
    }

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
    }

    /// Tells `onChange` of every change of a state row, until the watch is cancelled.
    func watchState(_ onChange: @escaping @Sendable (SharedStateChange) -> Void) -> SharedWatch {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.stateWatchers[state.nextWatcher] = onChange
            return state.nextWatcher
        }
        return SharedWatch { [weak self] in self?.state.withLock { _ = $0.stateWatchers.removeValue(forKey: id) } }
    }

    /// Tells `onChange` whenever a policy decision may have changed, until the watch is cancelled.
    func watchPolicy(_ onChange: @escaping @Sendable () -> Void) -> SharedWatch {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.policyWatchers[state.nextWatcher] = onChange
            return state.nextWatcher
        }
        return SharedWatch { [weak self] in self?.state.withLock { _ = $0.policyWatchers.removeValue(forKey: id) } }
    }

    /// Tells `onAppend` the handler's name whenever a delivery became pending, until the watch is cancelled.
    func watchDeliveries(_ onAppend: @escaping @Sendable (String) -> Void) -> SharedWatch {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.deliveryWatchers[state.nextWatcher] = onAppend
            return state.nextWatcher
        }
        return SharedWatch { [weak self] in self?.state.withLock { _ = $0.deliveryWatchers.removeValue(forKey: id) } }
    }

    /// Connects and listens; the connection, or `nil` when that failed (logged).
    private func listen() async -> PostgresConnection? {
        do {
            let connection = try await connections.connect().get()
            connection.addListener(channel: "mosaic_state") { [weak self] _, notification in
                self?.stateChanged(notification.payload)
            }
            connection.addListener(channel: "mosaic_policy") { [weak self] _, _ in self?.policyChanged() }
            connection.addListener(channel: "mosaic_delivery") { [weak self] _, notification in
                guard let self else { return }
                for watcher in state.withLock({ Array($0.deliveryWatchers.values) }) { watcher(notification.payload) }
            }
            _ = try await connection.query("LISTEN mosaic_state", logger: connections.logger).get()
            _ = try await connection.query("LISTEN mosaic_policy", logger: connections.logger).get()
            _ = try await connection.query("LISTEN mosaic_delivery", logger: connections.logger).get()
            let stopped = state.withLock { state in
                if !state.stopped { state.connection = connection }
                return state.stopped
            }
            if stopped { try? await connection.close() }
            return stopped ? nil : connection
        } catch {
            connections.logger.warning(
                "cannot listen for other instances' changes; trying again",
                metadata: ["database": "\(connections.url)", "error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// Waits for the connection to drop, then connects again (backing off), and resynchronizes every watcher.
    private func keepListening(connected: PostgresConnection?) async {
        var connection = connected
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            if let connection {
                try? await connection.closeFuture.get()
                guard !state.withLock({ $0.stopped }) else { return }
                connections.logger.warning(
                    "lost the connection that listens for other instances' changes; reconnecting",
                    metadata: ["database": "\(connections.url)"])
                delay = .milliseconds(100)
            }
            do {
                try await Task.sleep(for: delay)
            } catch {
                return
            }
            delay = min(delay * 2, .seconds(5))
            connection = await listen()
            if connection != nil { resynchronize() }
        }
    }

    /// A state row changed: reads it, and tells the watchers its value and revision. The payload is
    /// `revision:key`.
    private func stateChanged(_ payload: String) {
        guard let colon = payload.firstIndex(of: ":"), let revision = Int64(payload[..<colon]) else {
            connections.logger.warning(
                "ignored a malformed mosaic_state notification", metadata: ["payload": "\(payload)"])
            return
        }
        let id = String(payload[payload.index(after: colon)...])
        Task {
            let change: SharedStateChange
            do {
                if let row = try await PostgresStateStore.read(id, on: connections) {
                    change = .changed(id: id, saved: row.saved, revision: row.revision)
                } else {
                    change = .changed(id: id, saved: nil, revision: revision)
                }
            } catch {
                // The row could not be read now; the next change or write of the key brings it up to date.
                connections.logger.warning(
                    "could not read a changed state row", metadata: ["key": "\(id)", "error": "\(error)"])
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
