package import Foundation

/// A persisted key's value as a store keeps it: its JSON, and the version of the key it was saved at.
package struct SavedState: Sendable, Equatable {
    /// The value's JSON, as the hub encoded it.
    package var data: Data
    /// The key's version when the value was saved; 1 for data saved before keys had versions.
    package var version: Int

    package init(data: Data, version: Int) {
        self.data = data
        self.version = version
    }
}

/// Where persisted state keys are kept: raw JSON and its version, per key identifier. The hub decodes, migrates
/// and encodes; a store only keeps bytes, so every store migrates the same way.
///
/// Implementation requirements: `save` is atomic (after a crash, a later `load` returns the old value or the new
/// one, whole); `park` moves the saved value somewhere no `save` overwrites, with its version and the reason, so
/// data the code cannot use is never lost. No call blocks a thread of the cooperative pool: a store that must
/// block (files, SQLite) does so on a thread of its own. Errors thrown name the store and what to check.
package protocol SavedStateStore: Sendable {
    /// `id`'s saved value, or `nil` when nothing is saved.
    func load(_ id: String) async throws -> SavedState?
    /// Saves `data` as `id`'s value at `version`, replacing what was saved.
    func save(_ data: Data, version: Int, for id: String) async throws
    /// Moves `id`'s saved value aside because of `reason`, and says where it was kept (for the diagnostic).
    func park(_ id: String, reason: String) async throws -> String
}
