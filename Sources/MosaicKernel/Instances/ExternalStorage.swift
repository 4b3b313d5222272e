package import Foundation
package import Mosaic

/// Where the instances of one app keep what they share: every persisted state key, the entitlement policy and the
/// outbox of durable events.
///
/// Without it (the default), persisted keys live under ``KernelOptions/stateDirectory`` and the policy is the one
/// the host passed to the kernel: right for one process. With it, every instance reads and writes the same rows,
/// sees the others' changes, and boots with the policy as the others left it. `MosaicPostgres` makes one:
///
/// ```swift
/// let database = try await PostgresBackend.connect(url: "postgres://ghost@127.0.0.1/ghost")
/// var options = KernelOptions()
/// options.externalStorage = database.storage
/// ```
public struct ExternalStorage: Sendable {
    package let state: any TransactionalStateStore
    package let policy: any PolicyStore
    /// The outbox of durable events.
    package let events: any DurableEventStore
    /// Where the storage is, for messages (never a password).
    public let description: String
    /// How the connection to the storage stands now: whether it answers, whether its change feed is alive.
    package let checks: @Sendable () -> [ReadinessCheck]

    package init(
        state: any TransactionalStateStore, policy: any PolicyStore, events: any DurableEventStore,
        description: String, checks: @escaping @Sendable () -> [ReadinessCheck] = { [] }
    ) {
        self.state = state
        self.policy = policy
        self.events = events
        self.description = description
        self.checks = checks
    }
}

/// A persisted key's row in external storage changed (by any instance, this one included), or the storage lost and
/// regained its change feed and every row should be compared again.
package enum StoredStateChange: Sendable {
    /// `id`'s row is at `revision` now; `saved` is its value, or `nil` when the row is gone (parked).
    case changed(id: String, saved: SavedState?, revision: Int64)
    /// Changes may have been missed (the feed reconnected): compare every key with the storage.
    case resynchronize
}

/// What a compare-and-set save did.
package enum StateSave: Sendable, Equatable {
    /// The row was written; it is at `revision` now.
    case saved(revision: Int64)
    /// Another writer got there first: the row is `current` at `revision` (`nil` for both when there is no row).
    case conflict(current: SavedState?, revision: Int64?)
}

/// A row a transaction writes: `id`'s new value, replacing the revision its writer read (`nil`: no row yet).
package struct StateRow: Sendable {
    package let id: String
    package let data: Data
    package let version: Int
    package let revision: Int64?

    package init(id: String, data: Data, version: Int, revision: Int64?) {
        self.id = id
        self.data = data
        self.version = version
        self.revision = revision
    }
}

/// A durable event a transaction puts into the outbox.
package struct OutboxEvent: Sendable {
    package let id: UUID
    package let type: String
    package let payload: Data
    package let sender: ModuleID

    package init(id: UUID, type: String, payload: Data, sender: ModuleID) {
        self.id = id
        self.type = type
        self.payload = payload
        self.sender = sender
    }
}

/// The deliveries a durable handler's transaction completes: their rows, and the claim that lent them to this
/// instance (one claim lends a whole batch).
package struct DeliveryCompletion: Sendable, Equatable {
    package let deliveries: [Int64]
    package let claim: UUID

    package init(deliveries: [Int64], claim: UUID) {
        self.deliveries = deliveries
        self.claim = claim
    }

    package init(delivery: Int64, claim: UUID) {
        self.init(deliveries: [delivery], claim: claim)
    }
}

/// What committing a transaction did.
package enum StateCommit: Sendable {
    /// Every row was written (at these revisions), every event stored and the delivery, if any, completed.
    case committed([String: Int64])
    /// Another writer changed `id` first; nothing was stored. The row is `current` at `revision` now.
    case conflict(id: String, current: SavedState?, revision: Int64?)
    /// These deliveries of those the transaction completes are no longer held by its claim (the lease ran out and
    /// another claim took them, or they are done): nothing was stored.
    case stale([Int64])
}

/// Persisted state that several instances share: every row carries a revision, a save replaces only the revision
/// its writer read, and every change reaches every instance's ``watch(_:)``.
package protocol TransactionalStateStore: SavedStateStore {
    /// Whether instances of other releases may run on this storage at once (a rolling deploy): a row saved at a
    /// version newer than a key knows is then one of theirs, live, and is left as it is rather than parked.
    var servesSeveralInstances: Bool { get }
    /// `id`'s saved value and its revision, or `nil` when nothing is saved.
    func loadRevision(_ id: String) async throws -> (saved: SavedState, revision: Int64)?
    /// The saved values and revisions of those of `ids` that have a row, by key: in one query where the storage can.
    func loadRevisions(_ ids: [String]) async throws -> [String: (saved: SavedState, revision: Int64)]
    /// Saves `data` as `id`'s value only when its row is still at `revision` (`nil`: there is no row yet).
    func save(_ data: Data, version: Int, for id: String, replacing revision: Int64?) async throws -> StateSave
    /// Saves every row (each only when still at the revision its writer read), stores every event and completes
    /// the deliveries of `completing` (only while its claim still holds every one), in one transaction: all of it,
    /// or nothing.
    func commit(_ rows: [StateRow], events: [OutboxEvent], completing: DeliveryCompletion?) async throws
        -> StateCommit
    /// Calls `onChange` for every change of a row from now on, until the returned watch is cancelled. It is
    /// called off the storage's own threads, and may be called for changes this instance made.
    func watch(_ onChange: @escaping @Sendable (StoredStateChange) -> Void) -> StoreWatch
}

extension TransactionalStateStore {
    /// Reads each key alone, for storage with no query that reads several.
    package func loadRevisions(_ ids: [String]) async throws -> [String: (saved: SavedState, revision: Int64)] {
        var rows: [String: (saved: SavedState, revision: Int64)] = [:]
        for id in ids { rows[id] = try await loadRevision(id) }
        return rows
    }
}

/// The entitlement decisions several instances share: each granted or revoked entitlement, as last decided on any
/// instance. Entitlements with no decision keep the host's default.
package protocol PolicyStore: Sendable {
    /// Every decision made so far.
    func decisions() async throws -> [Entitlement: Bool]
    /// Records that `entitlement` is granted (or revoked) for every instance.
    func decide(_ entitlement: Entitlement, granted: Bool) async throws
    /// Calls `onChange` whenever a decision may have changed (also after the feed reconnected), until cancelled.
    func watch(_ onChange: @escaping @Sendable () -> Void) -> StoreWatch
}

/// Stops a watch of external storage.
package struct StoreWatch: Sendable {
    private let stop: @Sendable () -> Void

    package init(stop: @escaping @Sendable () -> Void) { self.stop = stop }

    package func cancel() { stop() }
}
