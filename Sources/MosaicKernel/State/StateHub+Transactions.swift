internal import Foundation
internal import Mosaic
internal import Synchronization

/// Transactions: several keys' writes and durable events committed together, and, for a durable handler, the
/// completion of its delivery. Every change runs first, on copies, holding every key's lane; only when all of them
/// succeeded is anything stored. With storage (PostgreSQL, or the embedded SQLite database) the rows, the events and
/// the completion are one database transaction, run again like a single write when another writer changed a key
/// first. Without any (state in memory), the values are installed and the events go to the in-process outbox.
extension StateHub {
    func commit(_ transaction: StateTransaction, as writer: ModuleID) async throws {
        try await commit(transaction, as: writer, completing: nil)
    }

    /// Commits `transaction` as `writer`; with `completing`, the delivery too, only while its claim still holds it
    /// (``StaleDelivery`` otherwise, with nothing stored).
    func commit(_ transaction: StateTransaction, as writer: ModuleID, completing: DeliveryCompletion?) async throws {
        for write in transaction.writes { try check(writer, mayWrite: write.id, writers: write.writers) }
        if !transaction.events.isEmpty {
            guard let events else {
                throw StateError(
                    .invalid, "This state hub has no outbox, so the transaction's events cannot be published.")
            }
            guard events.isPublisher(writer) else {
                throw StateError(.inactive, "\(writer) is not active, so it cannot publish; nothing was written.")
            }
        }
        let deadline = clock.now() + timeLimit
        let lanes = LaneGathering(hub: self)
        for write in transaction.writes { try write.stage(lanes) }
        // In identifier order, so that two transactions sharing keys never deadlock.
        let ids = lanes.lanes.keys.sorted()
        let hold = LaneHold(ids.compactMap { lanes.lanes[$0] })
        defer { hold.release() }
        let name = ids.count == 1 ? ids[0] : "a transaction of \(ids.count) keys"
        // Each key's write is counted like a single write's, written or failed with the whole.
        var outcome = "failed"
        defer {
            for id in ids {
                telemetry?.count(
                    MetricName.stateWrites, [("key", id), ("module", writer.rawValue), ("outcome", outcome)])
            }
        }
        do {
            try await hold.acquire(until: deadline, on: clock)
        } catch {
            throw Self.unavailable(name, waitingFor: "the writes of its keys before it", error)
        }
        for load in lanes.loads { try await load(hold, deadline) }
        if let transactional {
            try await commitTransactional(
                transaction, as: writer, in: transactional, completing: completing, hold: hold, until: deadline,
                name: name)
        } else {
            try await commitLocally(
                transaction, as: writer, completing: completing, hold: hold, until: deadline, name: name)
        }
        outcome = "written"
        for event in transaction.events { events?.fanOut(event, from: writer) }
    }

    /// Runs every change, then commits the rows and events in one transaction of external storage; on a conflict,
    /// adopts the other instance's row and runs them all again.
    private func commitTransactional(
        _ transaction: StateTransaction, as writer: ModuleID, in transactional: any TransactionalStateStore,
        completing: DeliveryCompletion?, hold: LaneHold, until deadline: Duration, name: String
    ) async throws {
        var outgoing: [OutboxEvent] = []
        if let outbox = events?.outbox {
            for event in transaction.events {
                do {
                    outgoing.append(try outbox.encode(event, from: writer))
                } catch {
                    throw StateError(.invalid, "\(error) Nothing was written.")
                }
            }
        }
        for _ in 0..<Self.maximumConflictAttempts {
            let staged = try stage(transaction)
            let rows = staged.rows
            let install = staged.install
            let outcome = try await storage(
                name, hold: hold, until: deadline,
                late: { result in
                    if case .success(.committed(let revisions)) = result {
                        for (_, installing) in install { installing(revisions) }
                    }
                },
                { [outgoing] in try await transactional.commit(rows, events: outgoing, completing: completing) })
            switch outcome {
            case .committed(let revisions):
                for key in staged.order { staged.install[key]?(revisions) }
                return
            case .stale(let deliveries):
                throw StaleDelivery(deliveries: deliveries)
            case .conflict(let id, let current, let revision):
                guard adopt(id, saved: current, revision: revision, force: true) else {
                    throw StateError(
                        .unreadable,
                        "\(id) was saved by another instance in a shape this one cannot read; nothing was written.")
                }
            }
        }
        throw StateError(
            .contended,
            "Other instances changed the transaction's keys \(Self.maximumConflictAttempts) times while it ran; "
                + "nothing was written. Run it again.")
    }

    /// Runs every change, then saves each persisted key in turn (a storage failure there leaves the keys before it
    /// saved), installs the values and puts the events into the in-process outbox. Without storage, the keys are in
    /// memory and so is the outbox: the completion is made first, and a stale one stores nothing.
    private func commitLocally(
        _ transaction: StateTransaction, as writer: ModuleID, completing: DeliveryCompletion?, hold: LaneHold,
        until deadline: Duration, name: String
    ) async throws {
        let staged = try stage(transaction)
        if let completing, let outbox = events?.outbox {
            // Without storage the outbox is in memory too: all of them completed, or none and the stale named.
            guard let memory = outbox.store as? MemoryEventStore else {
                throw StateError(.invalid, "A durable handler's transaction needs its outbox beside its state.")
            }
            let stale = memory.complete(ifHolding: completing.deliveries, claim: completing.claim)
            guard stale.isEmpty else { throw StaleDelivery(deliveries: stale) }
        }
        for key in staged.order {
            guard let save = staged.save[key] else { continue }
            let install = staged.install[key]
            try await storage(
                key, hold: hold, until: deadline,
                late: { result in if case .success = result { install?([:]) } }, save)
        }
        for key in staged.order { staged.install[key]?([:]) }
        guard let outbox = events?.outbox, !transaction.events.isEmpty else { return }
        var outgoing: [OutboxEvent] = []
        for event in transaction.events {
            do {
                outgoing.append(try outbox.encode(event, from: writer))
            } catch {
                throw StateError(.invalid, "\(error)")
            }
        }
        do {
            // The outbox here is in memory and always answers: its events are not given up on after the keys
            // were saved.
            try await outbox.append(outgoing, until: nil)
        } catch {
            throw StateError(.unavailable, "\(error)")
        }
    }

    /// Runs the transaction's changes on copies of the keys' values, each key's changes in order.
    private func stage(_ transaction: StateTransaction) throws -> Staging {
        let staging = Staging(hub: self)
        for write in transaction.writes { try write.stage(staging) }
        return staging
    }
}

/// Collects each key's lane, and what loads the key once the lanes are held.
private final class LaneGathering: TransactionStaging {
    let hub: StateHub
    var lanes: [String: WriteLane] = [:]
    var loads: [(LaneHold, Duration) async throws -> Void] = []

    init(hub: StateHub) { self.hub = hub }

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        guard lanes[key.id] == nil else { return }
        lanes[key.id] = try hub.lane(of: key)
        let hub = hub
        loads.append { hold, deadline in try await hub.ensureLoaded(key, hold: hold, until: deadline) }
    }
}

/// A transaction's changes run on copies: per key, the value so far, the row to commit (persisted keys, with
/// external storage), and how to save and install the value once everything succeeded.
private final class Staging: TransactionStaging {
    let hub: StateHub
    private var values: [String: any Sendable] = [:]
    private var revisions: [String: Int64?] = [:]
    private(set) var order: [String] = []
    private var rowsByKey: [String: StateRow] = [:]
    var save: [String: @Sendable () async throws -> Void] = [:]
    var install: [String: @Sendable (_ revisions: [String: Int64]) -> Void] = [:]

    init(hub: StateHub) { self.hub = hub }

    /// The rows to commit, in identifier order.
    var rows: [StateRow] { rowsByKey.keys.sorted().compactMap { rowsByKey[$0] } }

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        let hub = hub
        if values[key.id] == nil {
            let (current, revision) = hub.state.withLock { state in
                (hub.current(key, in: &state).value, state.entries[key.id]?.revision)
            }
            values[key.id] = current
            revisions[key.id] = revision
            order.append(key.id)
        }
        var value = values[key.id] as? Value ?? key.initial
        try change(&value)
        values[key.id] = value
        let final = value
        if hub.transactional != nil, key.persistence != .memory {
            let data = try StateHub.encode(final, of: key)
            rowsByKey[key.id] = StateRow(
                id: key.id, data: data, version: key.version, revision: revisions[key.id] ?? nil)
            install[key.id] = { revisions in
                if let revision = revisions[key.id] { hub.publish(key.id, value: final, revision: revision) }
            }
        } else {
            if let store = hub.store(for: key.persistence) {
                let data = try StateHub.encode(final, of: key)
                save[key.id] = {
                    try await hub.persisting(key.id) {
                        try await store.save(data, version: key.version, for: key.id)
                    }
                }
            }
            install[key.id] = { _ in hub.install(final, for: key) }
        }
    }
}

/// A durable handler's transaction found deliveries it completes no longer held by its claim: the lease ran out and
/// another claim took them over (or completed them). Nothing was stored; the claim that holds them now handles them.
struct StaleDelivery: Error, CustomStringConvertible {
    /// The deliveries no longer held.
    let deliveries: [Int64]

    var description: String {
        "the delivery was taken over by another claim after this attempt's lease ran out; its transaction was rolled "
            + "back, and the claim that holds it now handles it"
    }
}
