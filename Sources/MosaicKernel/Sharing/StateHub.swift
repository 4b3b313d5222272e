internal import Foundation
internal import Mosaic
internal import Synchronization

/// The kernel's shared state: one value per key, written atomically under one lock, persisted when the key asks,
/// and handed to observers (each keeps only the newest value, so a slow observer never holds up a writer).
final class StateHub: StateStore {
    private struct Entry {
        let type: ObjectIdentifier
        var value: any Sendable
        var observers: [Int: @Sendable (any Sendable) -> Void] = [:]
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// The database, opened on the first use of a `.database` key.
        var database: StateDatabase?
        /// Whether opening the database failed (reported once; its keys then live in memory).
        var databaseUnavailable = false
        var nextObserver = 0
        var diagnostics: [Diagnostic] = []
        var finished = false
    }

    /// The writer the host writes as; it may write every key.
    static let host: ModuleID = "mosaic.host"

    private let state = Mutex(State())
    private let directory: String?

    /// A hub persisting keys under `directory`; without one, they live in memory (with a warning).
    init(directory: String?) {
        self.directory = directory
    }

    /// Problems met with persisted state.
    var diagnostics: [Diagnostic] { state.withLock { $0.diagnostics } }

    func read<Value>(_ key: StateKey<Value>) -> Value {
        state.withLock { state in current(key, in: &state) }
    }

    func write<Value>(_ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void) throws {
        if let writers = key.writers, writer != Self.host, !writers.contains(writer) {
            throw StateError(
                "\(writer) may not write \(key.id); only \(writers.map(\.rawValue).sorted().joined(separator: ", ")) may."
            )
        }
        try state.withLock { state in
            if let entry = state.entries[key.id], entry.type != ObjectIdentifier(Value.self) {
                throw StateError(
                    "\(key.id) holds \(type(of: entry.value)), not \(Value.self); two keys share the identifier.")
            }
            let old = current(key, in: &state)
            var value = old
            try update(&value)
            guard value != old else { return }
            if let persister = persister(for: key.persistence, in: &state) { try persister.save(value, for: key.id) }
            state.entries[key.id]?.value = value
            for observer in state.entries[key.id]?.observers.values ?? [:].values { observer(value) }
        }
    }

    func values<Value>(of key: StateKey<Value>) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let token: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            continuation.yield(current(key, in: &state))
            defer { state.nextObserver += 1 }
            state.entries[key.id]?.observers[state.nextObserver] = { value in
                if let value = value as? Value { continuation.yield(value) }
            }
            return state.nextObserver
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.entries[key.id]?.observers.removeValue(forKey: token) }
        }
        return stream
    }

    /// Ends every observation: the kernel shut down.
    func finish() {
        state.withLock { state in
            state.finished = true
            for id in state.entries.keys { state.entries[id]?.observers = [:] }
        }
    }

    /// The value of `key`, loading it (from its file, or its initial value) on first use. A key whose identifier
    /// was first used with another type keeps that value; this use sees its own initial value.
    private func current<Value>(_ key: StateKey<Value>, in state: inout State) -> Value {
        if let entry = state.entries[key.id] {
            return entry.value as? Value ?? key.initial
        }
        var value = key.initial
        if key.persistence != .memory {
            if let persister = persister(for: key.persistence, in: &state) {
                let (loaded, problem) = persister.load(Value.self, for: key.id)
                if let loaded { value = loaded }
                if let problem { state.diagnostics.append(problem) }
            } else if directory == nil {
                state.diagnostics.append(
                    Diagnostic(
                        .statePersistence, .warning, modules: [],
                        message: "\(key.id) asks to be persisted, but the kernel has no state directory; it is kept "
                            + "in memory and lost when the app ends.",
                        fix: "Set KernelOptions.stateDirectory."))
            }
        }
        state.entries[key.id] = Entry(type: ObjectIdentifier(Value.self), value: value)
        return value
    }

    /// Where keys of `persistence` are kept, or `nil` for memory (also when the database cannot be opened, which
    /// is reported once).
    private func persister(for persistence: StatePersistence, in state: inout State) -> (any StatePersister)? {
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
                state.database = try StateDatabase(directory: directory)
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
