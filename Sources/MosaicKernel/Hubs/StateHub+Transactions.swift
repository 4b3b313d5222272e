internal import Foundation
internal import Mosaic
internal import Synchronization

/// Transactions: several keys' writes and durable events committed together. Every change runs first, on copies,
/// holding every key's lane; only when all of them succeeded is anything stored. With shared storage the rows and
/// the events are one database transaction, run again like a single write when another instance changed a key
/// first. Without it, the keys are saved one after another and the events go to the in-process outbox after them.
extension StateHub {
    func commit(_ transaction: StateTransaction, as writer: ModuleID) throws {
        for write in transaction.writes { try check(writer, mayWrite: write.id, writers: write.writers) }
        if !transaction.events.isEmpty {
            guard let events else {
                throw StateError("This state store has no outbox, so the transaction's events cannot be published.")
            }
            guard events.isPublisher(writer) else {
                throw StateError("\(writer) is not active, so it cannot publish; nothing was written.")
            }
        }
        let lanes = LaneGathering(hub: self)
        for write in transaction.writes { try write.stage(lanes) }
        // In identifier order, so that two transactions sharing keys never deadlock.
        try Self.holding(lanes.lanes.sorted { $0.key < $1.key }.map(\.value)[...]) {
            if let shared {
                try commitShared(transaction, as: writer, in: shared)
            } else {
                try commitLocally(transaction, as: writer)
            }
        }
        for event in transaction.events { events?.fanOut(event, from: writer) }
    }

    /// Runs every change, then commits the rows and events in one transaction of shared storage; on a conflict,
    /// adopts the other instance's row and runs them all again.
    private func commitShared(
        _ transaction: StateTransaction, as writer: ModuleID, in shared: any SharedStatePersister
    ) throws {
        var outgoing: [OutboxEvent] = []
        if let outbox = events?.outbox {
            for event in transaction.events {
                do {
                    outgoing.append(try outbox.encode(event, from: writer))
                } catch {
                    throw StateError("\(error) Nothing was written.")
                }
            }
        }
        for _ in 0..<Self.maximumSharedAttempts {
            let staged = try stage(transaction)
            let outcome: SharedCommit
            do {
                outcome = try shared.commit(staged.rows, events: outgoing)
            } catch {
                throw StateError(
                    "The transaction may not have been committed to \(shared): \(error). If the storage answered "
                        + "nothing it may still have been; read the keys before running it again.")
            }
            switch outcome {
            case .committed(let revisions):
                for key in staged.order { staged.install[key]?(revisions[key]) }
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

    /// Runs every change, then saves each persisted key in turn (a storage failure there leaves the keys before it
    /// saved), installs the values and puts the events into the in-process outbox.
    private func commitLocally(_ transaction: StateTransaction, as writer: ModuleID) throws {
        let staged = try stage(transaction)
        for key in staged.order { try staged.save[key]?() }
        for key in staged.order { staged.install[key]?(nil) }
        for event in transaction.events {
            do {
                try events?.outbox.append(event, from: writer)
            } catch {
                throw StateError("\(error)")
            }
        }
    }

    /// Runs the transaction's changes on copies of the keys' values, each key's changes in order.
    private func stage(_ transaction: StateTransaction) throws -> Staging {
        let staging = Staging(hub: self)
        for write in transaction.writes { try Self.$isChanging.withValue(true) { try write.stage(staging) } }
        return staging
    }

    /// Runs `body` holding every lane, taken in the order given.
    private static func holding(_ lanes: ArraySlice<Lane>, _ body: () throws -> Void) throws {
        guard let first = lanes.first else { return try body() }
        try first.lock.withLock { _ in try holding(lanes.dropFirst(), body) }
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

/// A transaction's changes run on copies: per key, the value so far, the row to commit (persisted keys, with
/// shared storage), and how to save and install the value once everything succeeded.
private final class Staging: TransactionStaging {
    let hub: StateHub
    private var values: [String: any Sendable] = [:]
    private var revisions: [String: Int64?] = [:]
    private(set) var order: [String] = []
    private var rowsByKey: [String: SharedRow] = [:]
    var save: [String: () throws -> Void] = [:]
    var install: [String: (_ revision: Int64?) -> Void] = [:]

    init(hub: StateHub) { self.hub = hub }

    /// The rows to commit, in identifier order.
    var rows: [SharedRow] { rowsByKey.keys.sorted().compactMap { rowsByKey[$0] } }

    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        let hub = hub
        if values[key.id] == nil {
            let (current, revision) = hub.state.withLock { state in
                (hub.current(key, in: &state), state.entries[key.id]?.revision)
            }
            values[key.id] = current
            revisions[key.id] = revision
            order.append(key.id)
        }
        var value = values[key.id] as? Value ?? key.initial
        try change(&value)
        values[key.id] = value
        let final = value
        if hub.shared != nil, key.persistence != .memory {
            let data = try StateHub.encode(final, of: key)
            rowsByKey[key.id] = SharedRow(
                id: key.id, data: data, version: key.version, revision: revisions[key.id] ?? nil)
            install[key.id] = { revision in if let revision { hub.publish(key.id, value: final, revision: revision) } }
        } else {
            save[key.id] = { try hub.save(final, of: key) }
            install[key.id] = { _ in hub.install(final, for: key) }
        }
    }
}
