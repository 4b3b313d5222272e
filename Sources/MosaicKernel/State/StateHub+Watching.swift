internal import Foundation
internal import Mosaic
internal import Synchronization

/// External storage: several instances of one app write the same rows, and every instance's observers see every
/// change, through the storage's watch.
extension StateHub {
    /// The error of a write that met a row saved in a shape this instance cannot read.
    func unreadable<Value>(_ key: StateKey<Value>, version: Int?) -> StateError {
        StateError(
            .unreadable,
            "\(key.id) was saved by another instance in a shape this one cannot read (version \(version ?? 0); this "
                + "app knows \(key.version)). Its value is unchanged, so that instance's data is not lost. Run one "
                + "app version across instances, or add a migration.")
    }

    /// Tells observers of `id` of `value`, which this instance saved at `revision`, unless a newer revision has
    /// already arrived through the watch.
    func publish(_ id: String, value: any Sendable, revision: Int64) {
        state.withLock { state in
            guard let entry = state.entries[id], entry.revision ?? 0 < revision else { return }
            take(value, revision: revision, as: id, of: entry, in: &state)
        }
    }

    /// A change of external storage, from the storage's watch: newer rows replace what this instance holds; after a
    /// reconnect, every key in use is read again.
    func receive(_ change: StoredStateChange) {
        switch change {
        case .changed(let id, let saved, let revision):
            adopt(id, saved: saved, revision: revision, force: false)
        case .resynchronize:
            Task { await resynchronize() }
        }
    }

    /// Reads every key in use again, as after a reconnect: a newer row replaces what this instance holds, and a row
    /// gone since this instance last saw it (deleted while the watch was down, whose notification never came) brings
    /// the key back to its initial value, as the notification would have.
    ///
    /// Keys are read in batches of ``resynchronizationBatch``, one batch at a time, each within the storage time
    /// limit. One pass runs at a time: asked for during one, another runs once it ends (however often it was asked).
    func resynchronize() async {
        guard let transactional else { return }
        let starts = state.withLock { state in
            if state.resynchronizing { state.resynchronizeAgain = true }
            defer { state.resynchronizing = true }
            return !state.resynchronizing
        }
        guard starts else { return }
        var again = true
        while again {
            await resynchronizationPass(transactional)
            again = state.withLock { state in
                defer { state.resynchronizeAgain = false }
                state.resynchronizing = state.resynchronizeAgain
                return state.resynchronizeAgain
            }
        }
    }

    /// The most keys one query of a resynchronization reads.
    static let resynchronizationBatch = 500

    private func resynchronizationPass(_ transactional: any TransactionalStateStore) async {
        let held = state.withLock { state in
            state.entries.compactMap { id, entry in entry.adopt == nil ? nil : (id, entry.revision) }
        }
        var start = held.startIndex
        while start < held.endIndex, !state.withLock({ $0.finished }) {
            let batch = held[start..<min(start + Self.resynchronizationBatch, held.endIndex)]
            start = batch.endIndex
            let rows: [String: (saved: SavedState, revision: Int64)]
            do {
                let ids = batch.map(\.0)
                rows = try await Deadline.wait(until: clock.now() + timeLimit, on: clock) {
                    try await transactional.loadRevisions(ids)
                }
            } catch {
                // The next change or write of these keys brings them up to date; the watch reports the outage.
                continue
            }
            for (id, revision) in batch {
                if let row = rows[id] {
                    adopt(id, saved: row.saved, revision: row.revision, force: false)
                } else if let revision {
                    adoptDeletion(id, heldAt: revision)
                }
            }
        }
    }

    /// Takes the row of `id` as gone, when this instance still holds it at `revision`: a write of its own that
    /// landed while the row was read keeps its value.
    private func adoptDeletion(_ id: String, heldAt revision: Int64) {
        // The key's initial value is made outside the lock: making it runs no module code, but adopting a row does.
        guard let adopt = state.withLock({ $0.entries[id]?.adopt }), let value = adopt(nil) else { return }
        state.withLock { state in
            guard let entry = state.entries[id], entry.revision == revision else { return }
            take(value, revision: nil, as: id, of: entry, in: &state)
        }
    }

    /// Takes `saved` at `revision` as `id`'s value when it is newer than what this instance holds (or, with
    /// `force`, whenever it differs: a write's conflict, where the row may also be gone). `false` when the row
    /// cannot be read by this instance; its value then stays as it was.
    ///
    /// The row is decoded (and migrated) outside the hub's lock: that runs the key's migrations and its value's
    /// `init(from:)`, module code that may read shared state itself.
    @discardableResult
    func adopt(_ id: String, saved: SavedState?, revision: Int64?, force: Bool) -> Bool {
        func wanted(_ entry: Entry) -> Bool {
            force ? entry.revision != revision : (revision ?? 0) > (entry.revision ?? 0)
        }
        // A key still loading takes the row too: its load keeps whichever of the two is newer.
        guard let adopt = state.withLock({ state in state.entries[id].flatMap { wanted($0) ? $0.adopt : nil } })
        else { return true }
        guard let value = adopt(saved) else {
            let diagnostic = Diagnostic(
                .statePersistence, .warning, modules: [],
                message: "Another instance saved \(id) at version \(saved?.version ?? 0), which this instance "
                    + "cannot read; it keeps its value and will not overwrite that row.",
                fix: "Run one app version across instances, or add a migration from that version.")
            state.withLock { state in
                if !state.diagnostics.contains(diagnostic) { state.diagnostics.append(diagnostic) }
            }
            return false
        }
        state.withLock { state in
            // Another row may have arrived while this one was decoded: the newer wins, as it would have then.
            guard let entry = state.entries[id], wanted(entry) else { return }
            take(value, revision: revision, as: id, of: entry, in: &state)
        }
        return true
    }

    /// Makes `value`, saved at `revision`, the value of `id` (whose entry is `entry`), and tells its observers.
    private func take(_ value: any Sendable, revision: Int64?, as id: String, of entry: Entry, in state: inout State) {
        state.entries[id]?.value = value
        state.entries[id]?.revision = revision
        state.entries[id]?.version = writes.advance()
        entry.announce(value)
    }

    /// How rows other instances wrote become `key`'s value: decoded and migrated like a load (no row: the initial
    /// value), or `nil` when this instance cannot read them.
    static func adopter<Value>(for key: StateKey<Value>) -> @Sendable (SavedState?) -> (any Sendable)? {
        { saved in
            guard let saved else { return key.initial }
            return try? key.decode(saved.data, storedVersion: saved.version).value
        }
    }
}
