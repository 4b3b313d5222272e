/// State writes and durable events that commit together, or not at all.
///
/// - On embedded or external storage, every key and event is stored in one database transaction: an event is never
///   published for a write that did not happen, nor a write kept whose event was lost.
/// - In memory, the values are installed and the events handed to the in-process outbox together; a crash loses all.
///
/// ```swift
/// try await context.state.transaction { transaction in
///     transaction.update(.stock) { $0 -= 1 }
///     transaction.publish(OrderPlaced(order: 7))
/// }
/// ```
///
/// The body only records; the kernel then runs every change on copies of the current values, and stores nothing
/// unless all of them succeed. When another instance wrote one of the keys first, the kernel takes its values and
/// runs the changes again (as a single ``SharedState/update(_:_:)`` does), so keep changes free of side effects.
public struct StateTransaction: Sendable {
    /// One recorded write: runs its change through whatever stages it.
    package struct Write: Sendable {
        package let id: String
        package let persistence: StatePersistence
        package let writers: Set<ModuleID>?
        package let stage: @Sendable (any TransactionStaging) throws -> Void
    }

    package private(set) var writes: [Write] = []
    package private(set) var events: [any DurableEvent] = []

    package init() {}

    /// The writes and events of `transactions`, in order, as one: what several durable handlers' transactions of one
    /// batch commit as.
    package init(merging transactions: [StateTransaction]) {
        writes = transactions.flatMap(\.writes)
        events = transactions.flatMap(\.events)
    }

    /// Changes `key`'s value in place when the transaction commits (after earlier writes of the same key in it).
    public mutating func update<Value>(
        _ key: StateKey<Value>, _ change: @escaping @Sendable (inout Value) throws -> Void
    ) {
        writes.append(
            Write(id: key.id, persistence: key.persistence, writers: key.writers) { staging in
                try staging.stage(key, change)
            })
    }

    /// Replaces `key`'s value when the transaction commits.
    public mutating func set<Value>(_ key: StateKey<Value>, to value: Value) {
        update(key) { $0 = value }
    }

    /// Publishes `event` when the transaction commits, into the outbox with the writes.
    public mutating func publish<Event: DurableEvent>(_ event: Event) {
        events.append(event)
    }
}

/// What runs a transaction's recorded changes: the kernel's state hub.
package protocol TransactionStaging {
    func stage<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws
}

extension SharedState {
    /// Runs `body` to record writes and durable events, then commits them together (see ``StateTransaction``).
    ///
    /// Returns once everything is stored (with external storage, committed).
    ///
    /// - Throws: ``StateError`` when a write is not allowed, the storage cannot be reached in time, or other
    ///   instances kept changing the keys, or what a change threw; nothing is stored then (with
    ///   ``StateError/Code/unavailable``, the storage may have stored it all without answering).
    public func transaction(_ body: (inout StateTransaction) throws -> Void) async throws {
        guard let store else {
            throw StateError(.notRunning, "\(module) is not running in a kernel, so it has no state to write.")
        }
        var transaction = StateTransaction()
        try body(&transaction)
        try await store.commit(transaction, as: module)
    }
}
