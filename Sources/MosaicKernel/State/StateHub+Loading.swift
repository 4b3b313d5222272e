internal import Foundation
internal import Mosaic
internal import Synchronization

extension StateHub {
    /// What loading a key found: its value (the initial one when nothing usable is saved), the row's revision in
    /// external storage, the problems met, and whether the storage could be read at all.
    struct Loaded<Value: Sendable>: Sendable {
        var value: Value
        var revision: Int64?
        var problems: [Diagnostic]
        /// `false` when the storage could not be read: the value is the initial one, not what is saved.
        var read: Bool
    }

    /// Loads every key in `keys` that is not loaded yet, at once; a key that cannot be loaded keeps its initial
    /// value, is reported, and is loaded again by its first write.
    func load(_ keys: [DeclaredStateKey]) async {
        await withTaskGroup(of: Void.self) { group in
            for key in keys where key.persistence != .memory { group.addTask { await key.load(self) } }
        }
    }

    /// Loads `key`'s saved value into memory, unless it is there already (``StateLoading``).
    func load<Value>(_ key: StateKey<Value>) async {
        guard let lane = try? lane(of: key) else { return }
        let hold = LaneHold(lane)
        defer { hold.release() }
        let deadline = clock.now() + timeLimit
        do {
            try await hold.acquire(until: deadline, on: clock)
            try await ensureLoaded(key, hold: hold, until: deadline)
        } catch {
            // Reported by the load itself, or a deadline: the key's first write loads it again.
            return
        }
    }

    /// A persisted key read before it was loaded (no module declares it): loaded in the background (its observers
    /// get the saved value when it arrives), and reported with the fix that fits `reader`: a module declares the
    /// key, the host loads it first.
    func loadUndeclared<Value>(_ key: StateKey<Value>, readBy reader: ModuleID) {
        let fix =
            reader == Self.host
            ? "Load the key before the host reads it: `await kernel.sharedState.load(key)` once at start (a key no "
                + "module declares is not loaded for you)."
            : "Declare the key in \(reader)'s register(in:) with module.reads(.key) or module.writes(.key)."
        let diagnostic = Diagnostic(
            .statePersistence, .warning, modules: reader == Self.host ? [] : [reader],
            message: "\(key.id) was read before it was loaded, so the read gave its initial value: no module declares "
                + "it. Its saved value is being loaded, and observers get it when it arrives.",
            fix: fix)
        state.withLock { state in if !state.diagnostics.contains(diagnostic) { state.diagnostics.append(diagnostic) } }
        Task { await load(key) }
    }

    /// Loads `key` when it is not loaded yet, holding its lane: installs the saved value (telling observers when it
    /// differs from what they have) and records the problems met.
    ///
    /// - Throws: ``StateError`` with ``StateError/Code/unavailable`` when the storage cannot be read by `deadline`.
    func ensureLoaded<Value>(_ key: StateKey<Value>, hold: LaneHold, until deadline: Duration) async throws {
        guard state.withLock({ $0.entries[key.id]?.loaded == false }), let store = store(for: key.persistence)
        else { return }
        let loaded = try await storage(key.id, hold: hold, until: deadline) {
            await self.fetch(key, from: store)
        }
        // The values are compared outside the lock: `==` is the module's code. Nothing else changes the key meanwhile
        // but a row arriving through the watch, which the load then leaves alone, as when it came first.
        let held = state.withLock { state in state.entries[key.id].map { ($0.value as? Value, $0.version) } }
        let differs = held.map { $0.0 != loaded.value } ?? false
        state.withLock { state in
            state.diagnostics += loaded.problems.filter { !state.diagnostics.contains($0) }
            guard loaded.read, let entry = state.entries[key.id], !entry.loaded else { return }
            state.entries[key.id]?.loaded = true
            // A newer row may have arrived through the watch while this one was read.
            if let adopted = entry.revision, adopted >= loaded.revision ?? .min { return }
            state.entries[key.id]?.revision = loaded.revision
            if differs || entry.version != held?.1 {
                state.entries[key.id]?.value = loaded.value
                state.entries[key.id]?.version = writes.advance()
                entry.announce(loaded.value)
            }
        }
        guard loaded.read else {
            throw StateError(
                .unavailable,
                "\(key.id) could not be loaded from its storage, so it cannot be changed safely; its value is "
                    + "unchanged. Check the storage, then write again.")
        }
    }

    /// `key`'s saved value, migrated to the key's version when it was saved at an older one (and saved back, so it
    /// is migrated once), or its initial value when nothing is saved or the saved data cannot be used; with the
    /// problems met, and the row's revision in external storage. Data no migration accepts is parked by the store, never
    /// overwritten; in external storage, data saved at a newer version is another instance's and is left as it is.
    func fetch<Value>(_ key: StateKey<Value>, from store: any SavedStateStore) async -> Loaded<Value> {
        var problems: [Diagnostic] = []
        if !key.migrationProblems.isEmpty {
            problems.append(
                Diagnostic(
                    .statePersistence, .warning, modules: [],
                    message: "\(key.id) declares version \(key.version), but "
                        + key.migrationProblems.joined(separator: "; ") + ".",
                    fix: "Declare one StateMigration step from each older version, each below the key's version."))
        }
        let saved: SavedState?
        var revision: Int64?
        let transactional = store as? any TransactionalStateStore
        do {
            if let transactional {
                (saved, revision) =
                    try await transactional.loadRevision(key.id).map { ($0.saved, $0.revision) } ?? (nil, nil)
            } else {
                saved = try await store.load(key.id)
            }
        } catch {
            problems.append(
                Diagnostic(
                    .statePersistence, .error, modules: [],
                    message: "The saved value of \(key.id) could not be loaded (\(error)); its initial value is used "
                        + "until it can be, and writes of it fail.",
                    fix: "Check the storage (the state directory and its permissions, or the transactional database)."))
            return Loaded(value: key.initial, revision: nil, problems: problems, read: false)
        }
        guard let saved else { return Loaded(value: key.initial, revision: nil, problems: problems, read: true) }
        do throws(StateMigrationFailure) {
            let (value, migrated) = try key.decode(saved.data, storedVersion: saved.version)
            if migrated {
                do {
                    let data = try StateMigration.encode(value)
                    if let transactional {
                        // Another instance may have migrated (or written) it first; its row then wins, and reaches
                        // this one through the watch.
                        if case .saved(let new) = try await transactional.save(
                            data, version: key.version, for: key.id, replacing: revision)
                        {
                            revision = new
                        }
                    } else {
                        try await store.save(data, version: key.version, for: key.id)
                    }
                } catch {
                    problems.append(
                        Diagnostic(
                            .statePersistence, .warning, modules: [],
                            message: "\(key.id) was migrated from version \(saved.version) to \(key.version), but the "
                                + "result could not be saved (\(error)); it will be migrated again on the next launch.",
                            fix: "Check that the state directory is writable."))
                }
            }
            return Loaded(value: value, revision: revision, problems: problems, read: true)
        } catch {
            if transactional?.servesSeveralInstances == true, case .newer = error.reason {
                // Another instance runs a newer release (a rolling deploy): the row is its live value, not data to
                // park. With no revision known, every write of the key here meets the row and is refused.
                problems.append(
                    Diagnostic(
                        .statePersistence, .warning, modules: [],
                        message: "\(key.id) was saved at version \(saved.version) by an instance of a newer release "
                            + "(this one knows \(key.version)); this instance uses the initial value, leaves the row "
                            + "as it is and refuses writes of the key.",
                        fix: "Run one app version across instances, or add a migration from that version."))
                return Loaded(value: key.initial, revision: nil, problems: problems, read: true)
            }
            problems.append(await parked(key, saved: saved, failure: error, in: store))
            return Loaded(value: key.initial, revision: nil, problems: problems, read: true)
        }
    }

    /// Parks `key`'s saved data that `failure` shows the code cannot use, and the diagnostic saying so.
    private func parked<Value>(
        _ key: StateKey<Value>, saved: SavedState, failure: StateMigrationFailure, in store: any SavedStateStore
    ) async -> Diagnostic {
        let (problem, fix) = Self.explain(failure, of: key)
        let kept: String
        do {
            kept = try await store.park(key.id, reason: problem)
        } catch {
            kept = "it could not be kept aside (\(error)), and the next write of the key replaces it"
        }
        return Diagnostic(
            .statePersistence, .error, modules: [],
            message: "The saved value of \(key.id) (version \(saved.version)) cannot be used: \(problem); the initial "
                + "value is used, and \(kept).",
            fix: fix + " Then restore the kept data if it matters, or delete it.")
    }

    /// What went wrong, and what the key's author or the operator does about it.
    private static func explain<Value>(
        _ failure: StateMigrationFailure, of key: StateKey<Value>
    ) -> (problem: String, fix: String) {
        switch failure.reason {
        case .newer:
            return (
                "it was saved at version \(failure.storedVersion), newer than version \(key.version) this app knows",
                "Run the app version that saved it, or add its shape to this key with a migration."
            )
        case .missingStep:
            return (
                "no migration reads version \(failure.failedAt) (the key is at version \(key.version))",
                "Add `.from(\(failure.failedAt), as: …)` to the key's migrations."
            )
        case .refused(let error):
            return (
                "the migration from version \(failure.failedAt) threw \(error)",
                "Make the migration from version \(failure.failedAt) accept this value."
            )
        case .undecodable(let type, let error):
            if failure.failedAt == key.version {
                return (
                    "it cannot be read as \(type) at version \(key.version) (\(error))",
                    failure.storedVersion == key.version
                        ? "If \(type) changed shape, raise the key's version and add a migration from \(key.version)."
                        : "Make the last migration return what \(type) decodes."
                )
            }
            return (
                "the migration from version \(failure.failedAt) cannot read it as \(type) (\(error))",
                "Make the migration from version \(failure.failedAt) read the type that version saved."
            )
        }
    }
}
