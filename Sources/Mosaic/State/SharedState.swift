internal import Synchronization

/// A module's handle on shared state, writing as the module.
///
/// ```swift
/// let city = context.state[.favouriteCity]
/// try context.state.update(.favouriteCity) { $0 = "Oslo" }
/// for await city in context.state.values(of: .favouriteCity) { … }
/// ```
public struct SharedState: Sendable {
    let store: (any StateStore)?
    /// The module this handle writes as.
    public let module: ModuleID

    package init(store: (any StateStore)?, module: ModuleID) {
        self.store = store
        self.module = module
    }

    /// The current value of `key` (its initial value when there is no store).
    public subscript<Value>(key: StateKey<Value>) -> Value {
        store?.read(key) ?? key.initial
    }

    /// Replaces `key`'s value.
    public func set<Value>(_ key: StateKey<Value>, to value: Value) throws {
        try update(key) { $0 = value }
    }

    /// Changes `key`'s value in place, atomically with respect to every other write of the key.
    ///
    /// `change` runs while the store holds its lock: keep it short, and do not read or write shared state in it.
    public func update<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) throws {
        guard let store else { throw StateError("\(module) has no state store: it is not running in a kernel.") }
        try store.write(key, as: module, change)
    }

    /// `key`'s value now, then each new value; a slow reader skips to the newest.
    public func values<Value>(of key: StateKey<Value>) -> Feed<Value> {
        store?.values(of: key) ?? .ended
    }

    /// One part of `key`'s value, now and each time that part changes (other changes are not reported).
    public func values<Value, Part: Equatable & Sendable>(
        of key: StateKey<Value>, _ part: any KeyPath<Value, Part> & Sendable
    ) -> Feed<Part> {
        Feed(DistinctParts(of: values(of: key), part))
    }
}

/// The changes of one part of a feed's values: each value's part, skipping those equal to the part before.
private final class DistinctParts<Value: Sendable, Part: Equatable & Sendable>: FeedSource {
    private let values: Feed<Value>
    private let part: any KeyPath<Value, Part> & Sendable
    /// The part delivered last.
    private let last = Mutex<Part?>(nil)

    init(of values: Feed<Value>, _ part: any KeyPath<Value, Part> & Sendable) {
        self.values = values
        self.part = part
    }

    func next(isolation actor: isolated (any Actor)?) async -> Part? {
        // Iterators of a feed share its source: a new one per call reads on where the last left off.
        var iterator = values.makeAsyncIterator()
        while let value = await iterator.next(isolation: actor) {
            let current = value[keyPath: part]
            let changed = last.withLock { last in
                defer { last = current }
                return last != current
            }
            if changed { return current }
        }
        return nil
    }
}
