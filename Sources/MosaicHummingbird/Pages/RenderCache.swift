internal import Mosaic
internal import MosaicKernel
internal import Synchronization

/// What the host rendered, kept until what it depended on changes: the contribution lists, the modules' states,
/// or a shared-state key the render read. Versions decide, never time: a request for an unchanged page compares a
/// few numbers and answers with the bytes it answered with before.
///
/// Each entry holds the ``RenderVersions`` taken before its render and the shared-state keys the render read (with
/// their versions). When the state version moved, only the keys the render read are compared. Entries made before
/// the contribution lists or module states last changed are dropped when a newer one is stored, so the cache holds
/// at most one entry per key of the current lists.
final class RenderCache: Sendable {
    private struct Entry {
        var versions: RenderVersions
        let reads: [String: UInt64]
        let value: any Sendable
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// The contribution and module versions the entries were made at, or after.
        var contributions: UInt64 = 0
        var modules: UInt64 = 0
    }

    private let state = Locked(State())

    /// The value kept under `key` when nothing it depended on changed since (`now` being the versions now), with
    /// the shared-state keys its render read.
    func value<Value: Sendable>(
        _ key: String, as type: Value.Type, now: RenderVersions, kernel: Kernel
    ) -> (value: Value, reads: [String: UInt64])? {
        state.withLock { state in
            guard var entry = state.entries[key], let value = entry.value as? Value,
                entry.versions.contributions == now.contributions, entry.versions.modules == now.modules
            else { return nil }
            if entry.versions.state != now.state {
                guard kernel.isUnchanged(entry.reads) else {
                    state.entries[key] = nil
                    return nil
                }
                // Nothing it read changed: the next request compares one number again.
                entry.versions.state = now.state
                state.entries[key] = entry
            }
            return (value, entry.reads)
        }
    }

    /// Keeps `value`, rendered from what was current at `versions` and reading `reads`.
    func keep(_ value: some Sendable, _ key: String, versions: RenderVersions, reads: [String: UInt64]) {
        state.withLock { state in
            if versions.contributions > state.contributions || versions.modules > state.modules {
                state.entries = state.entries.filter {
                    $0.value.versions.contributions >= versions.contributions
                        && $0.value.versions.modules >= versions.modules
                }
                state.contributions = max(state.contributions, versions.contributions)
                state.modules = max(state.modules, versions.modules)
            }
            guard versions.contributions == state.contributions, versions.modules == state.modules else { return }
            state.entries[key] = Entry(versions: versions, reads: reads, value: value)
        }
    }
}

/// Whether the render under way may be kept: a part that failed (a factory that threw) marks it, so that the
/// failure is tried again, and logged, on the next request.
final class RenderOutcome: Sendable {
    @TaskLocal static var current: RenderOutcome?

    private let failed = Atomic(false)

    /// Whether a part failed.
    var hasFailed: Bool { failed.load(ordering: .acquiring) }

    /// Marks the render under way (if any) as not to be kept.
    static func markFailed() {
        current?.failed.store(true, ordering: .releasing)
    }
}

extension WebHost {
    /// What `render` returns, kept under `key` until the contribution lists, the modules' states or a shared-state
    /// key it read change. A render that throws, or in which a part failed, is not kept. Inside an outer render,
    /// what this one read counts for the outer one too (also when the value is reused).
    func rendered<Value: Sendable>(
        _ key: String, keepIf isKept: (Value) -> Bool = { _ in true }, render: () async throws -> Value
    ) async rethrows -> Value {
        let now = kernel.renderVersions
        if let kept = renders.value(key, as: Value.self, now: now, kernel: kernel) {
            StateReads.replay(kept.reads)
            return kept.value
        }
        let reads = StateReads()
        let outcome = RenderOutcome()
        let value = try await reads.track {
            try await RenderOutcome.$current.withValue(outcome, operation: render)
        }
        if outcome.hasFailed {
            RenderOutcome.markFailed()
        } else if isKept(value) {
            renders.keep(value, key, versions: now, reads: reads.keys)
        }
        return value
    }
}
