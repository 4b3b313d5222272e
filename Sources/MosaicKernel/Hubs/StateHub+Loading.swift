internal import Foundation
internal import Mosaic

extension StateHub {
    /// `key`'s saved value, migrated to the key's version when it was saved at an older one (and saved back, so it
    /// is migrated once), or its initial value when nothing is saved or the saved data cannot be used; with the
    /// problems met, and the row's revision in shared storage. Data no migration accepts is parked by the store, never
    /// overwritten.
    func load<Value>(
        _ key: StateKey<Value>, from persister: any StatePersister
    ) -> (Value, revision: Int64?, [Diagnostic]) {
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
        let shared = persister as? any SharedStatePersister
        do {
            if let shared {
                (saved, revision) = try shared.loadRevision(key.id).map { ($0.saved, $0.revision) } ?? (nil, nil)
            } else {
                saved = try persister.load(key.id)
            }
        } catch {
            problems.append(
                Diagnostic(
                    .statePersistence, .error, modules: [],
                    message: "The saved value of \(key.id) could not be loaded (\(error)); the initial value is used.",
                    fix: "Check the state directory and its permissions."))
            return (key.initial, nil, problems)
        }
        guard let saved else { return (key.initial, nil, problems) }
        do throws(StateMigrationFailure) {
            let (value, migrated) = try key.decode(saved.data, storedVersion: saved.version)
            if migrated {
                do {
                    let data = try StateMigration.encode(value)
                    if let shared {
                        // Another instance may have migrated (or written) it first; its row then wins, and reaches
                        // this one through the watch.
                        if case .saved(let new) = try shared.save(
                            data, version: key.version, for: key.id, replacing: revision)
                        {
                            revision = new
                        }
                    } else {
                        try persister.save(data, version: key.version, for: key.id)
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
            return (value, revision, problems)
        } catch {
            problems.append(parked(key, saved: saved, failure: error, in: persister))
            return (key.initial, nil, problems)
        }
    }

    /// Parks `key`'s saved data that `failure` shows the code cannot use, and the diagnostic saying so.
    private func parked<Value>(
        _ key: StateKey<Value>, saved: SavedState, failure: StateMigrationFailure, in persister: any StatePersister
    ) -> Diagnostic {
        let (problem, fix) = Self.explain(failure, of: key)
        let kept: String
        do {
            kept = try persister.park(key.id, reason: problem)
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
