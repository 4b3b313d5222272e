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
        var nextObserver = 0
        var diagnostics: [Diagnostic] = []
        var finished = false
    }

    /// The writer the host writes as; it may write every key.
    static let host: ModuleID = "mosaic.host"

    private let state = Mutex(State())
    private let files: StateFiles?

    /// A hub persisting `.jsonFile` keys under `directory`; without one, they live in memory (with a warning).
    init(directory: String?) {
        files = directory.map(StateFiles.init(directory:))
    }

    /// Problems met with persisted state.
    var diagnostics: [Diagnostic] { state.withLock { $0.diagnostics } }

    func read<Value>(_ key: StateKey<Value>) -> Value {
        state.withLock { state in current(key, in: &state) }
    }

    func write<Value>(_ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void) throws {
        if let writers = key.writers, writer != Self.host, !writers.contains(writer) {
            throw StateError(
                "\(writer) may not write \(key.id); only \(writers.map(\.rawValue).sorted().joined(separator: ", ")) may.")
        }
        try state.withLock { state in
            if let entry = state.entries[key.id], entry.type != ObjectIdentifier(Value.self) {
                throw StateError(
                    "\(key.id) holds \(type(of: entry.value)), not \(Value.self); two keys share the identifier.")
            }
            var value = current(key, in: &state)
            try update(&value)
            guard value != current(key, in: &state) else { return }
            if key.persistence == .jsonFile, let files { try files.save(value, for: key.id) }
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
        if key.persistence == .jsonFile {
            if let files {
                let (loaded, problem) = files.load(Value.self, for: key.id)
                if let loaded { value = loaded }
                if let problem { state.diagnostics.append(problem) }
            } else {
                state.diagnostics.append(
                    Diagnostic(
                        .statePersistence, .warning, modules: [],
                        message: "\(key.id) asks to be kept in a file, but the kernel has no state directory; it is "
                            + "kept in memory and lost when the app ends.",
                        fix: "Set KernelOptions.stateDirectory."))
            }
        }
        state.entries[key.id] = Entry(type: ObjectIdentifier(Value.self), value: value)
        return value
    }
}
