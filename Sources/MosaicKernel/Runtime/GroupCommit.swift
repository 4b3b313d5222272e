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
        let write: Write
        let caller: CheckedContinuation<Outcome, any Error>
    }

    private let store: Store
    /// How much of a group's limit one write takes (an event is 1, a batch of events its count).
    private let weight: @Sendable (Write) -> Int
    private let limit: Int
    /// What names the row a write stores: two writes of one row go to different groups.
    private let row: (@Sendable (Write) -> String)?
    /// The writes waiting for the next group, and whether one is being stored.
    private let queue = Locked<(waiting: [Waiting], storing: Bool)>(([], false))

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
        try await withCheckedThrowingContinuation { (caller: CheckedContinuation<Outcome, any Error>) in
            let start = queue.withLock { queue -> Bool in
                queue.waiting.append(Waiting(write: write, caller: caller))
                defer { queue.storing = true }
                return !queue.storing
            }
            if start { Task { await self.storeWaiting() } }
        }
    }

    /// Stores the waiting writes, a group at a time, until none wait.
    private func storeWaiting() async {
        while let group = nextGroup() {
            do {
                let outcomes = try await store(group.map(\.write))
                guard outcomes.count == group.count else {
                    throw GroupCommitMismatch(writes: group.count, outcomes: outcomes.count)
                }
                for (waiting, outcome) in zip(group, outcomes) { waiting.caller.resume(returning: outcome) }
            } catch {
                for waiting in group { waiting.caller.resume(throwing: error) }
            }
        }
    }

    /// Takes the next group off the queue, in arrival order, or `nil` (and stops storing) when none wait.
    private func nextGroup() -> [Waiting]? {
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
            if group.isEmpty { queue.storing = false }
            return group.isEmpty ? nil : group
        }
    }
}

/// The storage answered a group with a different number of outcomes than it had writes: a defect in the store.
struct GroupCommitMismatch: Error, CustomStringConvertible {
    let writes: Int
    let outcomes: Int

    var description: String { "the storage answered \(outcomes) outcomes for \(writes) writes" }
}
