internal import Foundation
internal import Mosaic
internal import Synchronization

/// Shared storage: several instances of one app write the same rows. A write replaces only the revision it read
/// (compare-and-set); when another instance got there first, the hub adopts that value and runs the change again
/// on it. Every instance's observers see every change, through the storage's watch.
extension StateHub {
    /// How many times a write runs its change before it gives up on a key that other instances keep changing.
    static let maximumSharedAttempts = 16

    /// Writes `key` to shared storage: runs `update` on the value this instance has, saves it if the row is still
    /// at the revision that value came from, and otherwise adopts the row's value and tries again.
    func applyShared<Value>(
        _ key: StateKey<Value>, _ update: (inout Value) throws -> Void, in shared: any SharedStatePersister
    ) throws {
        for _ in 0..<Self.maximumSharedAttempts {
            let (old, revision) = state.withLock { state in
                (current(key, in: &state), state.entries[key.id]?.revision)
            }
            var value = old
            try Self.$isChanging.withValue(true) { try update(&value) }
            if value == old {
                // Nothing to write, unless the value here is stale: another instance's change may not have arrived
                // yet, and then this write must still replace it.
                let row = try load(key.id, from: shared)
                if row?.revision == revision { return }
                guard adopt(key.id, saved: row?.saved, revision: row?.revision, force: true) else {
                    throw unreadable(key, version: row?.saved.version)
                }
                continue
            }
            let data = try Self.encode(value, of: key)
            var outcome = SharedSave.saved(revision: 0)
            try persisting(key.id) {
                do {
                    outcome = try shared.save(data, version: key.version, for: key.id, replacing: revision)
                } catch {
                    throw StateError("\(key.id) could not be saved in \(shared): \(error). Its value is unchanged.")
                }
            }
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
            "\(key.id) was changed by other instances \(Self.maximumSharedAttempts) times while this write ran; "
                + "its value is unchanged. Write it again, or make fewer instances write it at once.")
    }

    /// `id`'s row in shared storage, as a write's error when it cannot be read.
    private func load(_ id: String, from shared: any SharedStatePersister) throws -> (
        saved: SavedState, revision: Int64
    )? {
        do {
            return try shared.loadRevision(id)
        } catch {
            throw StateError("\(id) could not be read from \(shared): \(error). Its value is unchanged.")
        }
    }

    /// The error of a write that met a row saved in a shape this instance cannot read.
    private func unreadable<Value>(_ key: StateKey<Value>, version: Int?) -> StateError {
        StateError(
            "\(key.id) was saved by another instance in a shape this one cannot read (version \(version ?? 0); this "
                + "app knows \(key.version)). Its value is unchanged, so that instance's data is not lost. Run one "
                + "app version across instances, or add a migration.")
    }

    /// Tells observers of `id` of `value`, which this instance saved at `revision`, unless a newer revision has
    /// already arrived through the watch.
    func publish(_ id: String, value: any Sendable, revision: Int64) {
        state.withLock { state in
            guard let entry = state.entries[id], entry.revision ?? 0 < revision else { return }
            state.entries[id]?.value = value
            state.entries[id]?.revision = revision
            state.entries[id]?.version = writes.advance()
            entry.announce?(value)
        }
    }

    /// A change of shared storage, from the storage's watch: newer rows replace what this instance holds; after a
    /// reconnect, every key in use is read again.
    func receive(_ change: SharedStateChange) {
        switch change {
        case .changed(let id, let saved, let revision):
            adopt(id, saved: saved, revision: revision, force: false)
        case .resynchronize:
            guard let shared else { return }
            let ids = state.withLock { state in state.entries.filter { $0.value.adopt != nil }.map(\.key) }
            for id in ids {
                do {
                    let row = try shared.loadRevision(id)
                    adopt(id, saved: row?.saved, revision: row?.revision, force: false)
                } catch {
                    // The next change or write of the key brings it up to date; the watch reports the outage.
                    continue
                }
            }
        }
    }

    /// Takes `saved` at `revision` as `id`'s value when it is newer than what this instance holds (or, with
    /// `force`, whenever it differs: a write's conflict, where the row may also be gone). `false` when the row
    /// cannot be read by this instance; its value then stays as it was.
    @discardableResult
    func adopt(_ id: String, saved: SavedState?, revision: Int64?, force: Bool) -> Bool {
        state.withLock { state in
            guard let entry = state.entries[id], let adopt = entry.adopt else { return true }
            if force ? entry.revision == revision : (revision ?? 0) <= (entry.revision ?? 0) { return true }
            guard let value = adopt(saved) else {
                let diagnostic = Diagnostic(
                    .statePersistence, .warning, modules: [],
                    message: "Another instance saved \(id) at version \(saved?.version ?? 0), which this instance "
                        + "cannot read; it keeps its value and will not overwrite that row.",
                    fix: "Run one app version across instances, or add a migration from that version.")
                if !state.diagnostics.contains(diagnostic) { state.diagnostics.append(diagnostic) }
                return false
            }
            state.entries[id]?.value = value
            state.entries[id]?.revision = revision
            state.entries[id]?.version = writes.advance()
            entry.announce?(value)
            return true
        }
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
