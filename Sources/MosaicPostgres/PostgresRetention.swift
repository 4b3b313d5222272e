internal import Logging
internal import Mosaic
internal import PostgresNIO
internal import Synchronization

/// Deletes what no one needs any more once it is older than the retention: deliveries done, events whose every
/// delivery is gone (or that no handler took), and unreadable state rows; and instances unseen for as long, or a day
/// when that is longer (a crashed instance's row, with the handlers it was counted as running). Parked and abandoned deliveries, and their
/// events, stay until an operator resubmits them. One instance prunes at a time (an advisory lock, not waited for),
/// in batches, so that a large backlog never holds a long lock; it runs at start and then every hour.
final class PostgresRetention: Sendable {
    /// The advisory lock of the instance that prunes.
    static let lockKey: Int64 = 0x4D6F_7361_6963_01
    /// The most rows one statement deletes.
    static let batch = 10_000
    /// How often an instance tries to prune.
    static let interval = Duration.seconds(3_600)

    let connections: PostgresConnections
    let retention: Duration
    private let running = Locked<Task<Void, Never>?>(nil)

    init(connections: PostgresConnections, retention: Duration) {
        self.connections = connections
        self.retention = retention
    }

    /// What one pass deleted, or `nil` when another instance held the lock.
    struct Pruned: Sendable, Equatable {
        var deliveries = 0
        var events = 0
        var unreadableStates = 0
        var instances = 0
    }

    /// Prunes now and then every ``interval`` until ``stop()``; a failed pass is logged and tried at the next.
    func start() {
        let task = Task {
            while !Task.isCancelled {
                do {
                    _ = try await prune()
                } catch {
                    connections.logger.warning(
                        "could not prune delivered events; trying again in an hour",
                        metadata: ["database": "\(connections.url)", "error": "\(error)"])
                }
                guard (try? await Task.sleep(for: Self.interval)) != nil else { return }
            }
        }
        running.withLock { $0 = task }
    }

    func stop() async {
        let task = running.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    /// One pass: every batch until none is full, in a transaction that holds the lock; `nil` when another
    /// instance holds it.
    func prune() async throws -> Pruned? {
        let seconds = retention.seconds
        return try await connections.transaction { [self] connection -> Pruned? in
            let locked = try await connections.deadlined(
                "SELECT pg_try_advisory_xact_lock(\(Self.lockKey))", on: connection
            ).get().rows.first?.decode(Bool.self)
            guard locked == true else { return nil }
            var pruned = Pruned()
            pruned.deliveries = try await deleteAll(
                """
                DELETE FROM mosaic_delivery WHERE id IN (
                    SELECT id FROM mosaic_delivery
                    WHERE state = 'done' AND completed_at < now() - make_interval(secs => \(seconds))
                    LIMIT \(Self.batch))
                """, on: connection)
            pruned.events = try await deleteAll(
                """
                DELETE FROM mosaic_event WHERE id IN (
                    SELECT event.id FROM mosaic_event event
                    WHERE event.published_at < now() - make_interval(secs => \(seconds))
                        AND NOT EXISTS (SELECT 1 FROM mosaic_delivery delivery WHERE delivery.event_id = event.id)
                    LIMIT \(Self.batch))
                """, on: connection)
            pruned.unreadableStates = try await deleteAll(
                """
                DELETE FROM mosaic_state_unreadable WHERE ctid IN (
                    SELECT ctid FROM mosaic_state_unreadable
                    WHERE kept_at < now() - make_interval(secs => \(seconds)) LIMIT \(Self.batch))
                """, on: connection)
            pruned.instances = try await deleteAll(
                """
                DELETE FROM mosaic_instance WHERE id IN (
                    SELECT id FROM mosaic_instance
                    WHERE seen_at < now() - make_interval(secs => \(max(seconds, 86_400))) LIMIT \(Self.batch))
                """, on: connection)
            return pruned
        }
    }

    /// Runs `statement` until it deletes less than a batch; how many rows it deleted.
    private func deleteAll(_ statement: PostgresQuery, on connection: PostgresConnection) async throws -> Int {
        var total = 0
        while true {
            let result = try await connections.deadlined(statement, on: connection).get()
            let deleted = result.metadata.rows ?? 0
            total += deleted
            if deleted < Self.batch { return total }
        }
    }
}
