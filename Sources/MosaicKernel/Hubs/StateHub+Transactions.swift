internal import Foundation
internal import Mosaic
internal import Synchronization

/// Transactions: several keys' writes and durable events committed together. With shared storage they are one
/// database transaction, retried like a single write when another instance changed a key first; without it the
/// writes are applied key by key, and the events go to the in-process outbox after them.
extension StateHub {
    func commit(_ transaction: StateTransaction, as writer: ModuleID) throws {
        for write in transaction.writes { try check(writer, mayWrite: write.id, writers: write.writers) }
        guard let events else {
            guard transaction.events.isEmpty else {
                throw StateError("This state store has no outbox, so the transaction's events cannot be published.")
            }
            for write in transaction.writes { try write.stage(DirectStaging(hub: self, writer: writer)) }
            return
        }
        guard transaction.events.isEmpty || events.isPublisher(writer) else {
            throw StateError("\(writer) is not active, so it cannot publish; nothing was written.")
        }
        let persisted = transaction.writes.filter { $0.persistence != .memory }
        if let shared {
            var outgoing: [OutboxEvent] = []
            for event in transaction.events {
                do {
                    outgoing.append(try events.outbox.encode(event, from: writer))
                } catch {
                    throw StateError("\(error) Nothing was written.")
                }
            }
            try commitShared(persisted, events: outgoing, in: shared)
        } else {
            for write in persisted { try write.stage(DirectStaging(hub: self, writer: writer)) }
            for event in transaction.events {
                do {
                    try events.outbox.append(event, from: writer)
                } catch {
                    throw StateError("\(error)")
                }
            }
        }
        for write in transaction.writes where write.persistence == .memory {
            try write.stage(DirectStaging(hub: self, writer: writer))
        }
        for event in transaction.events { events.fanOut(event, from: writer) }
    }

    /// Commits `writes` and `events` in one transaction of shared storage, holding every key's lane (in identifier
    /// order, so two transactions never wait on each other); on a conflict, adopts the other instance's row and
    /// runs every change again.
    private func commitShared(
        _ writes: [StateTransaction.Write], events: [OutboxEvent], in shared: any SharedStatePersister
    ) throws {
        let lanes = LaneGathering(hub: self)
        for write in writes { try write.stage(lanes) }
        try Self.holding(lanes.lanes.sorted { $0.key < $1.key }.map(\.value)[...]) {
            for _ in 0..<Self.maximumSharedAttempts {
                let staged = SharedStaging(hub: self)
                for write in writes { try Self.$isChanging.withValue(true) { try write.stage(staged) } }
                let rows = staged.rows.sorted { $0.key < $1.key }.map(\.value.row)
                let outcome: SharedCommit
                do {
                    outcome = try shared.commit(rows, events: events)
                } catch {
                    throw StateError(
                        "The transaction could not be committed to \(shared): \(error). Nothing was written.")
                }
                switch outcome {
                case .committed(let revisions):
                    for (id, row) in staged.rows {
                        if let revision = revisions[id] { publish(id, value: row.value, revision: revision) }
                    }
                    return
                case .conflict(let id, let current, let revision):
                    guard adopt(id, saved: current, revision: revision, force: true) else {
                        throw StateError(
                            "\(id) was saved by another instance in a shape this one cannot read; nothing was written.")
                    }
                }
            }
            throw StateError(
                "Other instances changed the transaction's keys \(Self.maximumSharedAttempts) times while it ran; "
                    + "nothing was written. Run it again.")
        }
    }

    /// Runs `body` holding every lane, taken in the order given.
    private static func holding(_ lanes: ArraySlice<Lane>, _ body: () throws -> Void) throws {
        guard let first = lanes.first else { return try body() }
        try first.lock.withLock { _ in try holding(lanes.dropFirst(), body) }
    }
}

/// Applies each change as an ordinary write.
private struct DirectStaging: TransactionStaging {
    let hub: StateHub
    let writer: ModuleID

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        try hub.apply(key, as: writer, change)
    }
}

/// Loads each key and collects its lane.
private final class LaneGathering: TransactionStaging {
    let hub: StateHub
    var lanes: [String: StateHub.Lane] = [:]

    init(hub: StateHub) { self.hub = hub }

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        lanes[key.id] = try hub.lane(of: key)
    }
}

/// Runs each change on the key's value here (or on the transaction's earlier change of it) and encodes the result.
private final class SharedStaging: TransactionStaging {
    let hub: StateHub
    var rows: [String: (value: any Sendable, row: SharedRow)] = [:]

    init(hub: StateHub) { self.hub = hub }

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        let (current, revision) = hub.state.withLock { state in
            (hub.current(key, in: &state), state.entries[key.id]?.revision)
        }
        var value = (rows[key.id]?.value as? Value) ?? current
        try change(&value)
        let data = try StateHub.encode(value, of: key)
        rows[key.id] = (
            value,
            SharedRow(id: key.id, data: data, version: key.version, revision: rows[key.id]?.row.revision ?? revision)
        )
    }
}
