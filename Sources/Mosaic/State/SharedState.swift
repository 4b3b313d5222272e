internal import Synchronization

/// A module's handle on shared state, writing as the module.
///
/// ```swift
/// let city = context.state[.favouriteCity]
/// try await context.state.set(.favouriteCity, to: "Oslo")
/// for await city in context.state.values(of: .favouriteCity) { … }
/// ```
///
/// Reads come from memory and never wait: the kernel loads every key a module declares (``ModuleRegistrar/reads(_:)``,
/// ``ModuleRegistrar/writes(_:)``) before the module activates. Writes wait until the value is stored (with shared
/// storage, committed), at most the host's storage time limit (then ``StateError/Code/unavailable``), and never
/// block a thread meanwhile.
public struct SharedState: Sendable {
    package let store: (any StateAccess)?
    /// The module this handle writes as.
    public let module: ModuleID

    package init(store: (any StateAccess)?, module: ModuleID) {
        self.store = store
        self.module = module
    }

    /// The current value of `key` (its initial value when there is no store, or while a key no module declared is
    /// still loading).
    public subscript<Value>(key: StateKey<Value>) -> Value {
        store?.read(key) ?? key.initial
    }

    /// Loads `key`'s saved value into memory, unless it is there already, so that reading it gives what is saved:
    /// for a key no module declares (the host's own, or one chosen at run time). Keys a module declares are loaded
    /// before it activates. A key that cannot be loaded keeps its initial value, and the kernel reports why.
    public func load<Value>(_ key: StateKey<Value>) async {
        await store?.load(key)
    }

    /// Replaces `key`'s value; returns once it is stored.
    ///
    /// - Throws: ``StateError`` (its ``StateError/code`` says why); nothing was stored unless the code is
    ///   ``StateError/Code/unavailable``, where the storage may have stored it without answering.
    public func set<Value>(_ key: StateKey<Value>, to value: Value) async throws {
        try await update(key) { $0 = value }
    }

    /// Changes `key`'s value in place, atomically with respect to every other write of the key; returns once the
    /// new value is stored.
    ///
    /// `change` runs while the key's other writes wait, so keep it short; it may read shared state, not write it.
    /// It may run more than once when other instances write the key at the same time, so keep it free of side
    /// effects.
    ///
    /// - Throws: ``StateError``, or what `change` threw (nothing is stored then).
    public func update<Value>(_ key: StateKey<Value>, _ change: (inout Value) throws -> Void) async throws {
        guard let store else {
            throw StateError(.notRunning, "\(module) is not running in a kernel, so it has no state to write.")
        }
        try await store.write(key, as: module, change)
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
    private let last = Locked<Part?>(nil)

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
