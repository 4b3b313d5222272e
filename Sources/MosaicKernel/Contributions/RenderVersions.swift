internal import Mosaic
internal import Synchronization

/// What a host's rendered page depends on, as version numbers that only grow: the contribution lists (with the
/// granted entitlements), the modules' states, and shared state. A host keeps what it rendered while they are
/// unchanged, instead of expiring it after a time.
package struct RenderVersions: Sendable, Hashable {
    /// Changes whenever any extension point's visible list changes or the granted entitlements do.
    package var contributions: UInt64
    /// Changes whenever any module's state does.
    package var modules: UInt64
    /// Changes whenever any shared-state key is written; each key's own version is the value this had after its
    /// last write (see ``StateReads``).
    package var state: UInt64
}

/// A counter that only grows, read without a lock; each advance is signalled to `signal`'s subscribers.
final class VersionCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    private let signal: Broadcast<Void>?

    init(signal: Broadcast<Void>? = nil) {
        self.signal = signal
    }

    /// The current version.
    var current: UInt64 { value.load(ordering: .acquiring) }

    /// Moves to the next version and returns it.
    @discardableResult
    func advance() -> UInt64 {
        let version = value.add(1, ordering: .acquiringAndReleasing).newValue
        signal?.send(())
        return version
    }
}

/// The shared-state keys read while it is current, each with the version of the value read: a host sets one
/// around a render (``track(_:)``) so that it redraws only when a key it read has been written since.
package final class StateReads: Sendable {
    @TaskLocal private static var current: StateReads?

    private let reads = Locked<[String: UInt64]>([:])

    /// An empty record.
    package init() {}

    /// The keys read, each with the version of the value read.
    package var keys: [String: UInt64] { reads.withLock { $0 } }

    /// Adds `keys` (read by a render whose result is reused inside this one).
    package func merge(_ keys: [String: UInt64]) {
        guard !keys.isEmpty else { return }
        reads.withLock { $0.merge(keys) { max($0, $1) } }
    }

    /// Adds `keys` to the record that is current, if any: a render reused what an earlier one read.
    package static func replay(_ keys: [String: UInt64]) {
        current?.merge(keys)
    }

    /// Runs `operation` recording into this record every shared-state read it makes (in child tasks too), and
    /// also into the record that was current before, so that nested renders add up.
    package func track<R>(_ operation: () async throws -> R) async rethrows -> R {
        let outer = Self.current
        defer { if let outer { outer.merge(keys) } }
        return try await Self.$current.withValue(self, operation: operation)
    }

    /// Notes that `key`'s value of `version` was read, when a record is current.
    static func note(_ key: String, version: UInt64) {
        guard let current else { return }
        current.reads.withLock { $0[key] = max($0[key] ?? 0, version) }
    }
}
