internal import Foundation
internal import Mosaic
internal import Synchronization

/// The kernel's shared state: one value per key, persisted when the key asks, and handed to observers (each keeps
/// only the newest value, so a slow observer never holds up a writer).
///
/// Reads take one short lock. A write takes its key's own lane: it reads the old value, runs the caller's change
/// and saves the result to the key's file or database row without holding the read lock, then publishes the new
/// value under it. The lane keeps one key's writes in order, so the value on disk is always the latest accepted
/// write of that key, while readers of every key (and writers of other keys) go on during the disk write.
final class StateHub: StateStore {
    struct Entry {
        let type: ObjectIdentifier
        var value: any Sendable
        /// The hub's write version after this key's last write; 0 until the first.
        var version: UInt64 = 0
        /// A `Broadcast<Value>` for the key's type.
        let observers: any AnyBroadcast
        let lane = Lane()
        /// The row's revision in shared storage; `nil` when there is no row, or the key is not shared.
        var revision: Int64? = nil
        /// Turns a row another instance wrote into this key's value (`nil` for a row it cannot read); only for keys
        /// kept in shared storage.
        var adopt: (@Sendable (SavedState?) -> (any Sendable)?)? = nil
        /// Hands a value of the key's type to its observers; only for keys kept in shared storage.
        var announce: (@Sendable (any Sendable) -> Void)? = nil
    }

    /// Orders the writes of one key.
    final class Lane: Sendable {
        let lock = Mutex<Void>(())
    }

    /// Whether the current task is inside a write's change closure, where writing shared state is refused.
    @TaskLocal static var isChanging = false

    struct State {
        var entries: [String: Entry] = [:]
        /// The database, opened on the first use of a `.database` key.
        var database: StateDatabase?
        /// Whether opening the database failed (reported once; its keys then live in memory).
        var databaseUnavailable = false
        var diagnostics: [Diagnostic] = []
        var finished = false
        /// The watch on shared storage's changes, while the hub runs.
        var watch: SharedWatch?
    }

    /// The writer the host writes as; it may write every key.
    static let host: ModuleID = "mosaic.host"

    let state = Mutex(State())
    /// Advances on every write of any key.
    let writes: VersionCounter
    private let directory: String?
    private let busyTimeout: Duration
    /// Where every persisted key goes instead of the directory: shared storage, or a store under test.
    private let persister: (any StatePersister)?
    /// The storage several instances share, when the host configured one; every persisted key lives there.
    let shared: (any SharedStatePersister)?

    /// A hub persisting keys under `directory`; without one, they live in memory (with a warning). A database
    /// write waits up to `busyTimeout` for another process's lock.
    /// Where write counts and persistence times go; `nil` records none.
    let telemetry: Telemetry?
    /// Where a transaction's durable events go.
    let events: EventHub?

    init(
        directory: String?, busyTimeout: Duration = .seconds(5), persister: (any StatePersister)? = nil,
        shared: (any SharedStatePersister)? = nil, telemetry: Telemetry? = nil, signal: Broadcast<Void>? = nil,
        events: EventHub? = nil
    ) {
        self.events = events
        writes = VersionCounter(signal: signal)
        self.telemetry = telemetry
        self.directory = directory
        self.busyTimeout = busyTimeout
        self.persister = shared ?? persister
        self.shared = shared
        if let shared {
            let watch = shared.watch { [weak self] change in self?.receive(change) }
            state.withLock { $0.watch = watch }
        }
    }

    /// Problems met with persisted state.
    var diagnostics: [Diagnostic] { state.withLock { $0.diagnostics } }

    func read<Value>(_ key: StateKey<Value>) -> Value {
        let (value, version) = state.withLock { state in
            (current(key, in: &state), state.entries[key.id]?.version ?? 0)
        }
        StateReads.note(key.id, version: version)
        return value
    }

    /// Whether every key in `reads` still has the version it was read at.
    func isUnchanged(_ reads: [String: UInt64]) -> Bool {
        state.withLock { state in reads.allSatisfy { state.entries[$0.key]?.version ?? 0 == $0.value } }
    }

    func apply<Value>(_ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void) throws {
        try check(writer, mayWrite: key.id, writers: key.writers)
        try lane(of: key).lock.withLock { _ in
            if let shared, key.persistence != .memory { return try applyShared(key, update, in: shared) }
            let old = state.withLock { state in current(key, in: &state) }
            var value = old
            try Self.$isChanging.withValue(true) { try update(&value) }
            guard value != old else { return }
            try save(value, of: key)
            install(value, for: key)
        }
    }

    /// Saves `value` where `key` persists locally (its file or database row); nothing for a key in memory.
    func save<Value>(_ value: Value, of key: StateKey<Value>) throws {
        guard let persister = state.withLock({ persister(for: key.persistence, in: &$0) }) else { return }
        let data = try Self.encode(value, of: key)
        try persisting(key.id) { try persister.save(data, version: key.version, for: key.id) }
    }

    /// Makes `value` `key`'s value here, and hands it to the key's observers.
    func install<Value>(_ value: Value, for key: StateKey<Value>) {
        state.withLock { state in
            state.entries[key.id]?.value = value
            state.entries[key.id]?.version = writes.advance()
            (state.entries[key.id]?.observers as? Broadcast<Value>)?.send(value)
        }
    }

    func values<Value>(of key: StateKey<Value>) -> Feed<Value> {
        subscription(of: key).feed
    }

    /// `key`'s value now, then each new value, until the subscription is cancelled or the kernel shuts down.
    func subscription<Value>(of key: StateKey<Value>) -> Subscription<Value> {
        state.withLock { state in
            guard !state.finished else { return .ended() }
            let value = current(key, in: &state)
            // A key whose identifier was first used with another type has nothing to observe.
            guard let observers = state.entries[key.id]?.observers as? Broadcast<Value> else { return .ended() }
            return observers.subscribe(buffering: .newest(1), first: value)
        }
    }

    /// Refuses a write `writer` may not make: the key names other writers, or it is inside a change closure.
    func check(_ writer: ModuleID, mayWrite id: String, writers: Set<ModuleID>?) throws {
        if let writers, writer != Self.host, !writers.contains(writer) {
            throw StateError(
                "\(writer) may not write \(id); only \(writers.map(\.rawValue).sorted().joined(separator: ", ")) may.")
        }
        guard !Self.isChanging else {
            throw StateError(
                "\(writer) wrote \(id) inside the change closure of another write; a change closure may read "
                    + "shared state but not write it. Compute the values first, then write each key in turn.")
        }
    }

    /// The lane that orders `key`'s writes, loading the key on first use.
    func lane<Value>(of key: StateKey<Value>) throws -> Lane {
        try state.withLock { state throws -> Lane in
            if let entry = state.entries[key.id], entry.type != ObjectIdentifier(Value.self) {
                throw StateError(
                    "\(key.id) holds \(type(of: entry.value)), not \(Value.self); two keys share the identifier.")
            }
            _ = current(key, in: &state)
            return state.entries[key.id]?.lane ?? Lane()
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
            throw StateError("\(key.id) could not be encoded as JSON: \(error). Its value is unchanged.")
        }
    }

    /// The value of `key`, loading it (from its file, or its initial value) on first use. A key whose identifier
    /// was first used with another type keeps that value; this use sees its own initial value.
    func current<Value>(_ key: StateKey<Value>, in state: inout State) -> Value {
        if let entry = state.entries[key.id] {
            return entry.value as? Value ?? key.initial
        }
        var value = key.initial
        var revision: Int64?
        if key.persistence != .memory {
            if let persister = persister(for: key.persistence, in: &state) {
                let problems: [Diagnostic]
                (value, revision, problems) = load(key, from: persister)
                state.diagnostics += problems
            } else if directory == nil {
                state.diagnostics.append(
                    Diagnostic(
                        .statePersistence, .warning, modules: [],
                        message: "\(key.id) asks to be persisted, but the kernel has no state directory; it is kept "
                            + "in memory and lost when the app ends.",
                        fix: "Set KernelOptions.stateDirectory."))
            }
        }
        let observers = Broadcast<Value>()
        var entry = Entry(type: ObjectIdentifier(Value.self), value: value, observers: observers, revision: revision)
        if shared != nil, key.persistence != .memory {
            entry.adopt = Self.adopter(for: key)
            entry.announce = { value in if let value = value as? Value { observers.send(value) } }
        }
        state.entries[key.id] = entry
        return value
    }

    /// Where keys of `persistence` are kept, or `nil` for memory (also when the database cannot be opened, which
    /// is reported once).
    private func persister(for persistence: StatePersistence, in state: inout State) -> (any StatePersister)? {
        if let persister, persistence != .memory { return persister }
        guard let directory else { return nil }
        switch persistence {
        case .memory:
            return nil
        case .jsonFile:
            return StateFiles(directory: directory)
        case .database:
            if let database = state.database { return database }
            guard !state.databaseUnavailable else { return nil }
            do {
                state.database = try StateDatabase(directory: directory, busyTimeout: busyTimeout)
                return state.database
            } catch {
                state.databaseUnavailable = true
                state.diagnostics.append(
                    Diagnostic(
                        .statePersistence, .error, modules: [],
                        message: "The state database in \(directory) cannot be opened (\(error)); database keys are "
                            + "kept in memory.",
                        fix: "Check that the directory is writable; move a damaged state.sqlite aside."))
                return nil
            }
        }
    }
}
