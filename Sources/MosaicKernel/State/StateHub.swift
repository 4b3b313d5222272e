internal import Foundation
internal import Mosaic
internal import Synchronization

/// The kernel's shared state: one value per key, persisted when the key asks, and handed to observers (each keeps
/// only the newest value, so a slow observer never holds up a writer).
///
/// Reads take one short lock and never wait for storage: a persisted key is loaded ahead (``load(_:)``, for every
/// key a module declares, before it activates); one read before it was loaded gives its initial value until the
/// load it starts completes. A write waits for its key's ``WriteLane`` (so the value stored is always the latest
/// accepted write of that key), loads the key if need be, runs the caller's change and awaits the storage, never
/// holding a lock across it; readers of every key, and writers of other keys, go on meanwhile. Every wait for the
/// lane or the storage ends at the write's deadline (``KernelOptions/storageTimeLimit`` on the kernel's clock).
final class StateHub: StateAccess, StateLoading, StateMirroring {
    struct Entry {
        let type: ObjectIdentifier
        var value: any Sendable
        /// The hub's write version after this key's last change; 0 until the first.
        var version: UInt64 = 0
        /// A `Broadcast<Value>` for the key's type.
        let observers: any AnyBroadcast
        let lane = WriteLane()
        /// Whether `value` is what storage holds: always for keys in memory; for persisted keys once loaded.
        var loaded: Bool
        /// The row's revision in external storage; `nil` when there is no row, or the key is in memory.
        var revision: Int64? = nil
        /// Turns a row another instance wrote into this key's value (`nil` for a row it cannot read); only for keys
        /// kept in external storage.
        var adopt: (@Sendable (SavedState?) -> (any Sendable)?)? = nil
        /// Hands a value of the key's type to its observers.
        let announce: @Sendable (any Sendable) -> Void
    }

    struct State {
        var entries: [String: Entry] = [:]
        var diagnostics: [Diagnostic] = []
        var finished = false
        /// The watch on external storage's changes, while the hub runs.
        var watch: StoreWatch?
        /// Whether a resynchronization runs, and whether another was asked for meanwhile (one runs after it).
        var resynchronizing = false
        var resynchronizeAgain = false
    }

    /// The writer the host writes as; it may write every key.
    static let host: ModuleID = "mosaic.host"

    let state = Locked(State())
    /// Advances on every write of any key.
    let writes: VersionCounter
    /// Where every persisted key goes: the storage (embedded or external), or a store under test; `nil` keeps every
    /// key in memory.
    private let store: (any SavedStateStore)?
    /// The storage several instances share, when the host configured one; every persisted key lives there.
    let transactional: (any TransactionalStateStore)?
    /// Where write counts and persistence times go; `nil` records none.
    let telemetry: Telemetry?
    /// Where a transaction's durable events go.
    let events: EventHub?
    /// The clock deadlines are measured on.
    let clock: KernelClock
    /// How long a write (or a load) may wait for its lane and its storage together.
    let timeLimit: Duration

    /// A hub persisting keys in `transactional` (the embedded database, or external storage), or in `store`;
    /// without either, persisted keys live in memory (with a warning). Every storage call ends after `timeLimit`.
    init(
        store: (any SavedStateStore)? = nil, transactional: (any TransactionalStateStore)? = nil,
        telemetry: Telemetry? = nil,
        signal: Broadcast<Void>? = nil,
        events: EventHub? = nil, clock: KernelClock = KernelClock(ContinuousClock()),
        timeLimit: Duration = .seconds(5)
    ) {
        self.events = events
        writes = VersionCounter(signal: signal)
        self.telemetry = telemetry
        self.store = transactional ?? store
        self.transactional = transactional
        self.clock = clock
        self.timeLimit = timeLimit
        if let transactional {
            let watch = transactional.watch { [weak self] change in self?.receive(change) }
            state.withLock { $0.watch = watch }
        }
    }

    /// Problems met with persisted state.
    var diagnostics: [Diagnostic] { state.withLock { $0.diagnostics } }

    /// `key`'s value, read by the host.
    func read<Value>(_ key: StateKey<Value>) -> Value {
        read(key, by: Self.host)
    }

    /// `key`'s value, read by `reader` (a module, or ``host``), whom the warning about a key nobody loaded advises.
    func read<Value>(_ key: StateKey<Value>, by reader: ModuleID) -> Value {
        let (value, version, unloaded) = state.withLock { state in
            let (value, created) = current(key, in: &state)
            let entry = state.entries[key.id]
            return (value, entry?.version ?? 0, created && entry?.loaded == false)
        }
        if unloaded { loadUndeclared(key, readBy: reader) }
        StateReads.note(key.id, version: version)
        return value
    }

    /// Whether every key in `reads` still has the version it was read at.
    func isUnchanged(_ reads: [String: UInt64]) -> Bool {
        state.withLock { state in reads.allSatisfy { state.entries[$0.key]?.version ?? 0 == $0.value } }
    }

    func values<Value>(of key: StateKey<Value>) -> Feed<Value> {
        subscription(of: key).feed
    }

    /// `key`'s value now, then each new value, until the subscription is cancelled or the kernel shuts down.
    func subscription<Value>(of key: StateKey<Value>, by reader: ModuleID = StateHub.host) -> Subscription<Value> {
        let (subscription, unloaded) = state.withLock { state -> (Subscription<Value>, Bool) in
            guard !state.finished else { return (.ended(), false) }
            let (value, created) = current(key, in: &state)
            // A key whose identifier was first used with another type has nothing to observe.
            guard let observers = state.entries[key.id]?.observers as? Broadcast<Value> else {
                return (.ended(), false)
            }
            return (
                observers.subscribe(buffering: .newest(1), first: value),
                created && state.entries[key.id]?.loaded == false
            )
        }
        if unloaded { loadUndeclared(key, readBy: reader) }
        return subscription
    }

    /// Refuses a write `writer` may not make: the key names other writers. (A write inside another's change
    /// closure cannot be written: the closure is synchronous, and a write is awaited.)
    func check(_ writer: ModuleID, mayWrite id: String, writers: Set<ModuleID>?) throws {
        if let writers, writer != Self.host, !writers.contains(writer) {
            throw StateError(
                .notAllowed,
                "\(writer) may not write \(id); only \(writers.map(\.rawValue).sorted().joined(separator: ", ")) may.")
        }
    }

    /// The lane that orders `key`'s writes, making the key's entry on first use.
    func lane<Value>(of key: StateKey<Value>) throws -> WriteLane {
        try state.withLock { state throws -> WriteLane in
            if let entry = state.entries[key.id], entry.type != ObjectIdentifier(Value.self) {
                throw StateError(
                    .invalid,
                    "\(key.id) holds \(type(of: entry.value)), not \(Value.self); two keys share the identifier.")
            }
            _ = current(key, in: &state)
            return state.entries[key.id]?.lane ?? WriteLane()
        }
    }

    /// Ends every observation: the kernel shut down.
    func finish() {
        let (observers, watch) = state.withLock { state in
            state.finished = true
            defer { state.watch = nil }
            return (state.entries.values.map(\.observers), state.watch)
        }
        watch?.cancel()
        for broadcast in observers { broadcast.finish() }
    }

    /// `value` as the JSON a store keeps.
    static func encode<Value>(_ value: Value, of key: StateKey<Value>) throws -> Data {
        do {
            return try StateMigration.encode(value)
        } catch {
            throw StateError(.invalid, "\(key.id) could not be encoded as JSON: \(error). Its value is unchanged.")
        }
    }

    /// The value `key` holds here, making its entry on first use (with the key's initial value; a persisted key is
    /// not loaded yet then, which `created` tells). A key whose identifier was first used with another type keeps
    /// that value; this use sees its own initial value.
    func current<Value>(_ key: StateKey<Value>, in state: inout State) -> (value: Value, created: Bool) {
        if let entry = state.entries[key.id] {
            return (entry.value as? Value ?? key.initial, false)
        }
        let persisted = key.persistence != .memory && store(for: key.persistence) != nil
        if key.persistence != .memory, !persisted {
            state.diagnostics.append(
                Diagnostic(
                    .statePersistence, .warning, modules: [],
                    message: "\(key.id) asks to be persisted, but the kernel has no state directory; it is kept "
                        + "in memory and lost when the app ends.",
                    fix: "Set KernelOptions.stateDirectory."))
        }
        let observers = Broadcast<Value>()
        var entry = Entry(
            type: ObjectIdentifier(Value.self), value: key.initial, observers: observers, loaded: !persisted,
            announce: { value in if let value = value as? Value { observers.send(value) } })
        if transactional != nil, key.persistence != .memory { entry.adopt = Self.adopter(for: key) }
        state.entries[key.id] = entry
        return (key.initial, true)
    }

    /// Makes `value` `key`'s value here, and hands it to the key's observers.
    func install<Value>(_ value: Value, for key: StateKey<Value>) {
        state.withLock { state in
            state.entries[key.id]?.value = value
            state.entries[key.id]?.version = writes.advance()
            state.entries[key.id]?.announce(value)
        }
    }

    /// Makes `value` the value of `key` in memory, telling observers when it changed: an isolated module's process
    /// mirrors its host's values so.
    func mirror<Value>(_ value: Value, for key: StateKey<Value>) {
        state.withLock { state in
            guard current(key, in: &state).value != value else { return }
            state.entries[key.id]?.value = value
            state.entries[key.id]?.version = writes.advance()
            state.entries[key.id]?.announce(value)
        }
    }

    /// Where keys of `persistence` are kept, or `nil` for memory.
    func store(for persistence: StatePersistence) -> (any SavedStateStore)? {
        persistence == .memory ? nil : store
    }
}
