internal import Foundation
internal import Mosaic
internal import Synchronization

/// Writing one key: the key's lane, then its load if need be, the caller's change, and the storage call, each wait
/// bounded by the write's deadline. With external storage a write replaces only the revision it read
/// (compare-and-set); when another instance got there first, the hub adopts that value and runs the change again.
extension StateHub {
    /// How many times a write runs its change before it gives up on a key that other instances keep changing.
    static let maximumConflictAttempts = 16

    func apply<Value>(
        _ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void
    ) async throws {
        try check(writer, mayWrite: key.id, writers: key.writers)
        let deadline = clock.now() + timeLimit
        let hold = LaneHold(try lane(of: key))
        defer { hold.release() }
        do {
            try await hold.acquire(until: deadline, on: clock)
        } catch {
            throw Self.unavailable(key.id, waitingFor: "the writes of the key before it", error)
        }
        if let transactional, key.persistence != .memory {
            return try await applyTransactional(key, update, in: transactional, hold: hold, until: deadline)
        }
        try await ensureLoaded(key, hold: hold, until: deadline)
        let old = state.withLock { state in current(key, in: &state).value }
        var value = old
        try update(&value)
        guard value != old else { return }
        if let store = store(for: key.persistence) {
            let data = try Self.encode(value, of: key)
            let stored = value
            try await storage(
                key.id, hold: hold, until: deadline,
                late: { [weak self] result in if case .success = result { self?.install(stored, for: key) } },
                {
                    try await self.persisting(key.id) {
                        try await store.save(data, version: key.version, for: key.id)
                    }
                })
        }
        install(value, for: key)
    }

    /// Writes `key` to external storage: runs `update` on the value this instance has, saves it if the row is still
    /// at the revision that value came from, and otherwise adopts the row's value and tries again.
    private func applyTransactional<Value>(
        _ key: StateKey<Value>, _ update: (inout Value) throws -> Void, in transactional: any TransactionalStateStore,
        hold: LaneHold, until deadline: Duration
    ) async throws {
        try await ensureLoaded(key, hold: hold, until: deadline)
        for _ in 0..<Self.maximumConflictAttempts {
            let (old, revision) = state.withLock { state in
                (current(key, in: &state).value, state.entries[key.id]?.revision)
            }
            var value = old
            try update(&value)
            if value == old {
                // Nothing to write, unless the value here is stale: another instance's change may not have arrived
                // yet, and then this write must still replace it.
                let row = try await storage(key.id, hold: hold, until: deadline) {
                    try await transactional.loadRevision(key.id)
                }
                if row?.revision == revision { return }
                guard adopt(key.id, saved: row?.saved, revision: row?.revision, force: true) else {
                    throw unreadable(key, version: row?.saved.version)
                }
                continue
            }
            let data = try Self.encode(value, of: key)
            let stored = value
            let outcome = try await storage(
                key.id, hold: hold, until: deadline,
                late: { [weak self] result in
                    if case .success(.saved(let new)) = result { self?.publish(key.id, value: stored, revision: new) }
                },
                {
                    try await self.persisting(key.id) {
                        try await transactional.save(data, version: key.version, for: key.id, replacing: revision)
                    }
                })
            switch outcome {
            case .saved(let new):
                publish(key.id, value: value, revision: new)
                return
            case .conflict(let current, let currentRevision):
                // Another instance wrote first: take its value, then run the change again on it.
                guard adopt(key.id, saved: current, revision: currentRevision, force: true) else {
                    throw unreadable(key, version: current?.version)
                }
            }
        }
        throw StateError(
            .contended,
            "\(key.id) was changed by other instances \(Self.maximumConflictAttempts) times while this write ran; "
                + "its value is unchanged. Write it again, or make fewer instances write it at once.")
    }

    /// The answer of `call` to the storage of key `id`, waited for until `deadline`. A call still unanswered then is
    /// left to finish on its own: the write fails with ``StateError/Code/unavailable``, and the lanes `hold` holds
    /// pass to the call, released (after `late` has its answer) when the storage answers, so that no later write
    /// of the key overtakes one the storage may still store.
    func storage<R: Sendable>(
        _ id: String, hold: LaneHold, until deadline: Duration,
        late: @escaping @Sendable (Result<R, any Error>) -> Void = { _ in },
        _ call: @escaping @Sendable () async throws -> R
    ) async throws -> R {
        do {
            return try await Deadline.wait(until: deadline, on: clock, call) { result in
                late(result)
                hold.releaseNow()
            }
        } catch let exceeded as Deadline.Exceeded {
            hold.handOff()
            throw Self.unavailable(id, waitingFor: "its storage", exceeded)
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(.unavailable, "\(id) could not be stored: \(error). Its value is unchanged.")
        }
    }

    /// The error of a write that stopped waiting for `what`.
    static func unavailable(_ id: String, waitingFor what: String, _ error: any Error) -> StateError {
        if let exceeded = error as? Deadline.Exceeded, exceeded.cancelled {
            return StateError(
                .unavailable,
                "The write of \(id) was cancelled while it waited for \(what); it may still be stored if it had "
                    + "reached the storage.")
        }
        return StateError(
            .unavailable,
            "The write of \(id) waited for \(what) past its time limit (KernelOptions.storageTimeLimit), so it was "
                + "given up on; if the storage answers late it may still be stored. Check the storage, then read the "
                + "key before writing again.")
    }
}
