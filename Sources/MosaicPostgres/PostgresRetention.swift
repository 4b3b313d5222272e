internal import Logging
internal import Mosaic
internal import PostgresNIO
internal import Synchronization

/// Deletes what no one needs any more once it is older than the retention: deliveries done, events whose every
/// delivery is gone (or that no handler took), and unreadable state rows; and instances unseen for as long, or a day
/// when that is longer (a crashed instance's row, with the handlers it was counted as running). Parked and abandoned
/// deliveries, and their events, stay until an operator resubmits them. It runs at start and then every hour, in
/// batches, each committed in a transaction of its own: a large backlog never holds a long lock, what a batch deleted
/// stays deleted, and ``stop()`` waits for one batch at most. One instance prunes at a time: each batch takes an
/// advisory lock, not waited for.
final class PostgresRetention: Sendable {
    /// The advisory lock of the instance that prunes.
    static let lockKey: Int64 = 0x4D6F_7361_6963_01
    /// How often an instance tries to prune.
    static let interval = Duration.seconds(3_600)

    let connections: PostgresConnections
    let retention: Duration
    /// The most rows one statement deletes (10,000 unless a test says).
    let batch: Int
    /// Called after each batch commits (for tests).
    private let committed: @Sendable () -> Void
    private let running = Locked<Task<Void, Never>?>(nil)

    init(
        connections: PostgresConnections, retention: Duration, batch: Int = 10_000,
        committed: @escaping @Sendable () -> Void = {}
    ) {
        self.connections = connections
        self.retention = retention
        self.batch = batch
        self.committed = committed
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

    /// One pass: each kind of row in batches, until a batch is not full; stops between batches when its task is
    /// cancelled (``stop()``) or another instance holds the lock. What it deleted, or `nil` when another instance
    /// held the lock from the start.
    func prune() async throws -> Pruned? {
        let seconds = retention.seconds
        let statements: [(PostgresQuery, WritableKeyPath<Pruned, Int>)] = [
            (
                """
                DELETE FROM mosaic_delivery WHERE id IN (
                    SELECT id FROM mosaic_delivery
                    WHERE state = 'done' AND completed_at < now() - make_interval(secs => \(seconds))
                    LIMIT \(batch))
                """, \.deliveries
            ),
            (
                """
                DELETE FROM mosaic_event WHERE id IN (
                    SELECT event.id FROM mosaic_event event
                    WHERE event.published_at < now() - make_interval(secs => \(seconds))
                        AND NOT EXISTS (SELECT 1 FROM mosaic_delivery delivery WHERE delivery.event_id = event.id)
                    LIMIT \(batch))
                """, \.events
            ),
            (
                """
                DELETE FROM mosaic_state_unreadable WHERE ctid IN (
                    SELECT ctid FROM mosaic_state_unreadable
                    WHERE kept_at < now() - make_interval(secs => \(seconds)) LIMIT \(batch))
                """, \.unreadableStates
            ),
            (
                """
                DELETE FROM mosaic_instance WHERE id IN (
                    SELECT id FROM mosaic_instance
                    WHERE seen_at < now() - make_interval(secs => \(max(seconds, 86_400))) LIMIT \(batch))
                """, \.instances
            ),
        ]
        var pruned: Pruned?
        for (statement, count) in statements {
            while !Task.isCancelled {
                guard let deleted = try await deleteBatch(statement) else { return pruned }
                var sum = pruned ?? Pruned()
                sum[keyPath: count] += deleted
                pruned = sum
                committed()
                if deleted < batch { break }
            }
        }
        return pruned
    }

    /// Runs `statement` once in a transaction of its own that holds the lock; how many rows it deleted, or `nil`
    /// when another instance holds the lock.
    private func deleteBatch(_ statement: PostgresQuery) async throws -> Int? {
        try await connections.transaction { [connections] connection -> Int? in
            let locked = try await connections.deadlined(
                "SELECT pg_try_advisory_xact_lock(\(Self.lockKey))", on: connection
            ).get().rows.first?.decode(Bool.self)
            guard locked == true else { return nil }
            return try await connections.deadlined(statement, on: connection).get().metadata.rows ?? 0
        }
    }
}
