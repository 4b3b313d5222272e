internal import Foundation
internal import Mosaic
internal import Synchronization

/// Shared storage: several instances of one app write the same rows, and every instance's observers see every
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
            state.entries[id]?.value = value
            state.entries[id]?.revision = revision
            state.entries[id]?.version = writes.advance()
            entry.announce(value)
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
            let ids = state.withLock { state in
                state.entries.filter { $0.value.adopt != nil }.map(\.key)
            }
            Task {
                for id in ids {
                    do {
                        let row = try await shared.loadRevision(id)
                        adopt(id, saved: row?.saved, revision: row?.revision, force: false)
                    } catch {
                        // The next change or write of the key brings it up to date; the watch reports the outage.
                        continue
                    }
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
            // A key still loading takes the row too: its load keeps whichever of the two is newer.
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
            entry.announce(value)
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
