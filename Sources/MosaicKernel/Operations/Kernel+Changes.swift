internal import Logging
public import Mosaic

/// What ``Kernel/uninstall(_:dependents:)`` does when other modules require the one leaving.
public enum DependentsPolicy: Sendable, Hashable {
    /// Refuse while active modules require it, naming them.
    case refuse
    /// Deactivate the dependents first; they stay blocked until the module is installed again.
    case deactivate
}

extension Kernel {
    /// Grants `entitlement` and activates, in dependency order, every module that was waiting for it. With shared
    /// storage, every instance grants it.
    ///
    /// The decision is recorded in external storage first, within ``KernelOptions/storageTimeLimit``, while other
    /// operations run; only applying it waits for them.
    ///
    /// - Throws: ``KernelError/Code-swift.struct/storageUnavailable`` when the external storage cannot record
    ///   it in time (nothing changes here then), or when the kernel is not running.
    public func grant(_ entitlement: Entitlement) async throws(KernelError) {
        try requireRunning()
        let decision = try await share(entitlement, granted: true)
        try await exclusively { () async throws(KernelError) in
            try requireRunning()
            guard apply(decision) else { return }
            logger.info("entitlement granted", metadata: ["entitlement": "\(entitlement)"])
            operationCause = .grant(entitlement)
            await reconcile()
        }
    }

    /// Revokes `entitlement`: deactivates every module that needs it and every module that requires those,
    /// dependents first. They come back when it is granted again. With external storage, every instance revokes it.
    ///
    /// As with ``grant(_:)``, the decision is recorded within ``KernelOptions/storageTimeLimit`` before the
    /// operation takes its turn.
    public func revoke(_ entitlement: Entitlement) async throws(KernelError) {
        try requireRunning()
        let decision = try await share(entitlement, granted: false)
        try await exclusively { () async throws(KernelError) in
            try requireRunning()
            guard apply(decision) else { return }
            logger.info("entitlement revoked", metadata: ["entitlement": "\(entitlement)"])
            await reconcile()
        }
    }

    /// Validates a module against the running graph and, when it fits, adds and activates it; modules that were
    /// blocked waiting for it come up too.
    ///
    /// - Returns: The module's state after activation: active, or blocked (by an entitlement, say), or failed.
    /// - Throws: ``KernelError/Code-swift.struct/installRefused`` with the diagnostics, when adding the module
    ///   would bring a new error (invalid or duplicate identifier, incompatible, a missing or mismatched
    ///   dependency, a cycle); nothing changes then.
    @discardableResult
    public func install(_ module: any Module.Type) async throws(KernelError) -> ModuleState {
        try await install(ModuleFactory(module: module))
    }

    /// Installs the module `factory` makes; see ``install(_:)-(Module.Type)``.
    @discardableResult
    public func install(_ factory: ModuleFactory) async throws(KernelError) -> ModuleState {
        try await exclusively { () async throws(KernelError) -> ModuleState in
            try requireRunning()
            let id = factory.manifest.id
            if let existing = graph.manifest(of: id) {
                let message = "\(id) is already installed (version \(existing.version))."
                throw KernelError(
                    .installRefused, message + " Uninstall it first to replace it.", module: id,
                    diagnostics: [
                        Diagnostic(
                            .duplicateIdentifier, .error, modules: [id], message: message,
                            fix: "Uninstall the installed \(id) first, or give the new module its own identifier.")
                    ])
            }
            var candidate = catalog
            candidate.add(factory)
            let grown = makeGraph(candidate)
            let known = Set(graph.diagnostics)
            let introduced = grown.diagnostics.filter { $0.severity == .error && !known.contains($0) }
            guard introduced.isEmpty else {
                throw KernelError(
                    .installRefused,
                    "\(id) was not installed: it does not fit the running graph.", module: id,
                    diagnostics: introduced)
            }
            catalog = candidate
            rebuildGraph()
            if let index = graph.position[id] {
                validate(index)
                records[index].cause = .install
            }
            logger.info("module installed", metadata: ["module": "\(id)"])
            operationCause = .install
            await reconcile()
            return state(of: id) ?? .discovered
        }
    }

    /// Deactivates and removes module `id`.
    ///
    /// - Parameter id: The module to remove; its manifest file, if it came from one, is left alone.
    /// - Parameter dependents: With ``DependentsPolicy/refuse`` (the default), a module that active modules
    ///   require is not removed; with ``DependentsPolicy/deactivate``, those others are deactivated first, dependents before
    ///   dependencies, and stay blocked.
    /// - Throws: ``KernelError`` when there is no such module, or when it has dependents and the policy refuses.
    public func uninstall(_ id: ModuleID, dependents: DependentsPolicy = .refuse) async throws(KernelError) {
        try await leave(id, dependents: dependents)
        // Outside the operation slot: the outbox's answer (within the storage time limit) changes nothing here.
        await abandonDurableHandlers(of: id)
    }

    /// Deactivates and removes `id` in the operation slot (``uninstall(_:dependents:)`` without the outbox).
    private func leave(_ id: ModuleID, dependents: DependentsPolicy) async throws(KernelError) {
        try await exclusively { () async throws(KernelError) in
            try requireRunning()
            guard let index = graph.position[id] else {
                throw KernelError(.unknownModule, "No module \(id) is installed; nothing was uninstalled.", module: id)
            }
            let requiring = graph.ids(
                graph.dependents[index].filter { other in
                    graph.required[other].contains(index) && records[other].isActive
                })
            if dependents == .refuse, !requiring.isEmpty {
                let names = requiring.map(\.rawValue).joined(separator: ", ")
                throw KernelError(
                    .uninstallRefused, "\(id) was not uninstalled: \(names) require it.", module: id,
                    diagnostics: [
                        Diagnostic(
                            .hasDependents, .error, modules: [id] + requiring,
                            message: "\(id) is required by \(names).",
                            fix: "Uninstall those first, or pass dependents: .deactivate to stop them along with \(id)."
                        )
                    ])
            }
            leaving.insert(id)
            await reconcile()
            leaving.remove(id)
            catalog.remove(id)
            rebuildGraph(forgetting: id)
            failures[id] = nil
            runtimeDiagnostics.removeAll { $0.modules.first == id }
            logger.info("module uninstalled", metadata: ["module": "\(id)"])
            await reconcile()
        }
    }
}
