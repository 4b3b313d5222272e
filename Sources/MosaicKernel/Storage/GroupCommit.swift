internal import Mosaic
internal import Synchronization

/// Writes to storage that share commits: while one group is being stored, every write that arrives waits for the
/// next, which stores all of them in one call. One writer pays a round trip per write; many at once pay one round
/// trip per group, so storage whose cost is the commit (a synced log) keeps up with them.
///
/// Each write gets its own outcome from the group's call, or the call's error when the call fails. Reads can share
/// round trips the same way (what a PostgreSQL instance reads when told that rows changed).
package final class GroupCommit<Write: Sendable, Outcome: Sendable>: Sendable {
    /// Stores one group, returning an outcome for each of its writes, in order.
    package typealias Store = @Sendable ([Write]) async throws -> [Outcome]

    private struct Waiting {
        let id: Int
        let write: Write
        let caller: CheckedContinuation<Outcome, any Error>
        /// When the caller stops waiting (the kernel's clock), or `nil` when it waits for the outcome however long.
        let deadline: Duration?
    }

    private struct Queue {
        /// The writes waiting for the next group.
        var waiting: [Waiting] = []
        /// Whether a group is being stored.
        var storing = false
        /// The writes of the group being stored, by position in it; `nil` where the caller stopped waiting.
        var sent: [Waiting?] = []
        /// The earliest deadline the watch sleeps until, and which watch is current.
        var watch: (until: Duration, generation: Int)?
        var generation = 0
    }

    private let store: Store
    /// How much of a group's limit one write takes (an event is 1, a batch of events its count).
    private let weight: @Sendable (Write) -> Int
    private let limit: Int
    /// What names the row a write stores: two writes of one row go to different groups.
    private let row: (@Sendable (Write) -> String)?
    private let queue = Locked(Queue())
    private let nextID = Atomic<Int>(0)

    /// - Parameters:
    ///   - limit: the weight one group takes at most; a single write heavier than that goes alone.
    ///   - weight: what one write counts against `limit`.
    ///   - row: the row a write stores, when writes of one row may not share a group; the later waits for the next.
    package init(
        limit: Int, weight: @escaping @Sendable (Write) -> Int = { _ in 1 },
        row: (@Sendable (Write) -> String)? = nil, store: @escaping Store
    ) {
        self.limit = limit
        self.weight = weight
        self.row = row
        self.store = store
    }

    /// How many writes wait for the next group.
    package var waiting: Int { queue.withLock { $0.waiting.count } }

    /// Stores `write` with the group after the one being stored (starting one when none is).
    package func submit(_ write: Write) async throws -> Outcome {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        return try await withCheckedThrowingContinuation { caller in
            enqueue(Waiting(id: id, write: write, caller: caller, deadline: nil))
        }
    }

    /// Stores `write` as ``submit(_:)`` does, waiting at most until `clock` reaches `deadline`, or until the task
    /// is cancelled; then throws ``Deadline/Exceeded``. A write still waiting for its group then leaves the queue
    /// and is never stored; one whose group was handed to the store may be stored all the same. One watch per
    /// queue keeps the deadlines, so a write costs no task or timer of its own.
    package func submit(_ write: Write, until deadline: Duration, on clock: KernelClock) async throws -> Outcome {
        guard !Task.isCancelled else { throw Deadline.Exceeded(cancelled: true, sent: false) }
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { caller in
                let watch = enqueue(Waiting(id: id, write: write, caller: caller, deadline: deadline))
                if let watch { Task { await self.watchDeadlines(until: deadline, generation: watch, on: clock) } }
                // Cancelled between the check above and now: its handler ran before there was anything to end.
                if Task.isCancelled { stopWaiting(id, cancelled: true) }
            }
        } onCancel: {
            stopWaiting(id, cancelled: true)
        }
    }

    /// Puts `waiting` in the queue and starts storing when nothing is; the generation of a new watch to start
    /// when its deadline comes before the current watch's, or `nil`.
    @discardableResult
    private func enqueue(_ waiting: Waiting) -> Int? {
        let (start, watch) = queue.withLock { queue -> (Bool, Int?) in
            queue.waiting.append(waiting)
            var watch: Int?
            if let deadline = waiting.deadline, queue.watch.map({ deadline < $0.until }) ?? true {
                queue.generation += 1
                queue.watch = (deadline, queue.generation)
                watch = queue.generation
            }
            defer { queue.storing = true }
            return (!queue.storing, watch)
        }
        if start { Task { await self.storeWaiting() } }
        return watch
    }

    /// Stores the waiting writes, a group at a time, until none wait.
    private func storeWaiting() async {
        while let group = nextGroup() {
            let result: Result<[Outcome], any Error>
            do {
                let outcomes = try await store(group)
                guard outcomes.count == group.count else {
                    throw GroupCommitMismatch(writes: group.count, outcomes: outcomes.count)
                }
                result = .success(outcomes)
            } catch {
                result = .failure(error)
            }
            let callers = queue.withLock { queue in
                defer { queue.sent = [] }
                return queue.sent
            }
            for (position, waiting) in callers.enumerated() {
                guard let waiting else { continue }
                waiting.caller.resume(with: result.map { $0[position] })
            }
        }
    }

    /// Takes the next group off the queue, in arrival order, as the group being stored; `nil` (and stops storing)
    /// when none wait.
    private func nextGroup() -> [Write]? {
        queue.withLock { queue in
            var group: [Waiting] = []
            var total = 0
            var rows: Set<String> = []
            for waiting in queue.waiting {
                let weight = weight(waiting.write)
                guard group.isEmpty || total + weight <= limit else { break }
                if let row, !rows.insert(row(waiting.write)).inserted { break }
                group.append(waiting)
                total += weight
            }
            queue.waiting.removeFirst(group.count)
            queue.sent = group
            if group.isEmpty { queue.storing = false }
            return group.isEmpty ? nil : group.map(\.write)
        }
    }

    /// The caller of write `id` stops waiting: it leaves the queue, or its group's outcome is dropped.
    private func stopWaiting(_ id: Int, cancelled: Bool) {
        Self.tell(queue.withLock { Self.takeOut(of: &$0) { $0.id == id } }, cancelled: cancelled)
    }

    /// Takes every write `ends` picks out of `queue`: a waiting one leaves it, one of the group being stored loses
    /// its outcome; each with whether it was sent.
    private static func takeOut(of queue: inout Queue, where ends: (Waiting) -> Bool) -> [(Waiting, sent: Bool)] {
        var taken: [(Waiting, sent: Bool)] = []
        queue.waiting.removeAll { waiting in
            guard ends(waiting) else { return false }
            taken.append((waiting, false))
            return true
        }
        for position in queue.sent.indices {
            guard let waiting = queue.sent[position], ends(waiting) else { continue }
            taken.append((waiting, true))
            queue.sent[position] = nil
        }
        return taken
    }

    /// Tells the callers of `taken` that they stopped waiting.
    private static func tell(_ taken: [(Waiting, sent: Bool)], cancelled: Bool) {
        for (waiting, sent) in taken {
            waiting.caller.resume(throwing: Deadline.Exceeded(cancelled: cancelled, sent: sent))
        }
    }

    /// Ends the wait of every write whose deadline passed, from `deadline` on, until no write has one; while
    /// `generation` is the current watch (one with an earlier deadline replaces it). Wakes at most once per
    /// ``watchInterval``: in an outage every write has a deadline of its own, a moment after the one before.
    private func watchDeadlines(until deadline: Duration, generation: Int, on clock: KernelClock) async {
        var next = deadline
        while true {
            guard (try? await clock.sleep(next)) != nil else {
                queue.withLock { queue in if queue.watch?.generation == generation { queue.watch = nil } }
                return
            }
            let now = clock.now()
            let step = queue.withLock { queue -> (ended: [(Waiting, sent: Bool)], next: Duration?) in
                guard queue.watch?.generation == generation else { return ([], nil) }
                let ended = Self.takeOut(of: &queue) { $0.deadline.map { $0 <= now } ?? false }
                let next = (queue.waiting.map(\.deadline) + queue.sent.map { $0?.deadline }).compactMap(\.self).min()
                let wake = next.map { max($0, now + Self.watchInterval) }
                queue.watch = wake.map { ($0, generation) }
                return (ended, wake)
            }
            Self.tell(step.ended, cancelled: false)
            guard let following = step.next else { return }
            next = following
        }
    }

    /// The least time between two wakes of the watch: a caller may wait this much past its deadline.
    static var watchInterval: Duration { .milliseconds(10) }
}

/// The storage answered a group with a different number of outcomes than it had writes: a defect in the store.
struct GroupCommitMismatch: Error, CustomStringConvertible {
    let writes: Int
    let outcomes: Int

    var description: String { "the storage answered \(outcomes) outcomes for \(writes) writes" }
}
