internal import Logging
internal import Mosaic

/// How an instance follows the policy instances share: the watch on its changes, and how its reads went.
struct StoredPolicyReads {
    /// The watch on the stored policy's changes, from boot to shutdown.
    var watch: StoreWatch?
    /// Why the stored policy could not be read the last time it was, or `nil` when it could.
    var problem: Diagnostic?
    /// The next read after one failed, and the delay it waits (doubling with each failure).
    var retry: Task<Void, Never>?
    var retryDelay: Duration = .zero
    /// When the stored policy was last read successfully (the kernel's clock), or `nil` before the first read.
    var readAt: Duration?
    /// Numbers this instance's recorded decisions and its reads' starts in the order they happen: what was
    /// learned later is never overwritten by what was learned earlier, when both wait for the operation slot.
    var sequence = 0
    /// The number of the latest read applied.
    var readApplied = 0
    /// The decisions recorded here since the read applied last, and their numbers.
    var decidedHere: [Entitlement: (number: Int, granted: Bool)] = [:]
    /// The number of the latest change the watch announced, and of the latest read whose policy the modules are
    /// in line with: while the first is the greater, this instance may serve what another instance revoked.
    var announced = 0
    var enforced = 0

    /// The next number.
    mutating func next() -> Int {
        sequence += 1
        return sequence
    }

    /// Ends the watch and any read that waits.
    mutating func stop() {
        watch?.cancel()
        watch = nil
        retry?.cancel()
        retry = nil
    }
}

/// A decision this instance recorded in external storage (or made alone, without it), to apply in the slot.
struct PolicyDecision {
    let entitlement: Entitlement
    let granted: Bool
    /// When it was recorded, among the reads (``StoredPolicyReads/sequence``).
    let number: Int
}

/// The shared decisions as one read found them, to apply in the slot.
struct StoredPolicyRead {
    let decisions: [Entitlement: Bool]
    /// When the read started (``StoredPolicyReads/sequence``).
    let number: Int
}

/// The entitlement policy that instances share: every grant and revoke is recorded in external storage first, each
/// instance applies the others' decisions as they come, and a new instance boots with the decisions so far.
///
/// Storage is called outside the operation slot, within ``KernelOptions/storageTimeLimit``; the slot is taken only
/// to apply what the call returned.
extension Kernel {
    /// Records `entitlement`'s new decision in external storage, if the kernel has one; throws when it cannot in
    /// time, so that no instance applies a decision the others never see.
    func share(_ entitlement: Entitlement, granted: Bool) async throws(KernelError) -> PolicyDecision {
        if let storage = options.externalStorage {
            do {
                try await withinStorageTimeLimit { try await storage.policy.decide(entitlement, granted: granted) }
            } catch {
                throw KernelError(
                    .storageUnavailable,
                    "\(granted ? "Granting" : "Revoking") \(entitlement) could not be recorded in "
                        + "\(storage.description) (\(error)); nothing changed on this instance, and the others "
                        + "follow the storage. Check the database, then try again.")
            }
        }
        return PolicyDecision(entitlement: entitlement, granted: granted, number: policyReads.next())
    }

    /// Applies a decision recorded here, unless a read that started after it was recorded is applied already (that
    /// read knows it, or a later one); `false` then.
    func apply(_ decision: PolicyDecision) -> Bool {
        guard decision.number > policyReads.readApplied else { return false }
        if options.externalStorage != nil {
            policyReads.decidedHere[decision.entitlement] = (decision.number, decision.granted)
        }
        if decision.granted { policy.grant(decision.entitlement) } else { policy.revoke(decision.entitlement) }
        return true
    }

    /// Applies a read of the shared decisions over the host's defaults, keeping the decisions recorded here after
    /// it started; `nil` when a read that started later is applied already.
    func policy(after read: StoredPolicyRead) -> EntitlementPolicy? {
        guard read.number > policyReads.readApplied else { return nil }
        var shared = defaultPolicy
        for (entitlement, granted) in read.decisions {
            if granted { shared.grant(entitlement) } else { shared.revoke(entitlement) }
        }
        policyReads.decidedHere = policyReads.decidedHere.filter { $0.value.number > read.number }
        for (entitlement, decided) in policyReads.decidedHere {
            if decided.granted { shared.grant(entitlement) } else { shared.revoke(entitlement) }
        }
        policyReads.readApplied = read.number
        return shared
    }

    /// The shared decisions, read within the storage time limit; `nil` without external storage, or when they cannot
    /// be read. A failed read changes nothing the kernel enforces: the policy read last stays (one failed read never
    /// switches modules off), ``StoredPolicyReads/problem`` says why, and the decisions are read again after a delay
    /// that doubles with each failure, from 1 s up to 30 s, until they can be.
    func readStoredPolicy() async -> StoredPolicyRead? {
        guard let storage = options.externalStorage else { return nil }
        let number = policyReads.next()
        do {
            let decisions = try await withinStorageTimeLimit { try await storage.policy.decisions() }
            policyReads.problem = nil
            policyReads.retryDelay = .zero
            policyReads.readAt = clock.now()
            return StoredPolicyRead(decisions: decisions, number: number)
        } catch {
            let delay = min(max(policyReads.retryDelay * 2, .seconds(1)), .seconds(30))
            policyReads.problem = Diagnostic(
                .storedPolicyUnavailable, .error, modules: [],
                message: "The entitlement policy in \(storage.description) could not be read (\(error)); the policy "
                    + "read last is kept (at boot, before any read, nothing is granted), and it is read again in "
                    + "\(delay).",
                fix: "Check that the database is reachable; the policy is read again until it can be.")
            logger.error("stored policy unavailable", metadata: ["error": "\(error)", "retry": "\(delay)"])
            readStoredPolicyAgain(after: delay)
            return nil
        }
    }

    /// Reads the shared decisions again `delay` from now (the kernel's clock), unless a read is already due.
    private func readStoredPolicyAgain(after delay: Duration) {
        guard policyReads.retry == nil, (try? requireRunning()) != nil else { return }
        policyReads.retryDelay = delay
        let deadline = clock.now() + delay
        policyReads.retry = Task { [weak self, clock] in
            guard (try? await clock.sleep(deadline)) != nil, let self else { return }
            await self.retryStoredPolicy()
        }
    }

    private func retryStoredPolicy() async {
        policyReads.retry = nil
        await refreshStoredPolicy()
    }

    /// Applies other instances' decisions as they arrive, until shutdown. Boot starts it before its first read of
    /// the policy, so that no decision made after that read goes unannounced.
    func watchStoredPolicy() {
        guard let storage = options.externalStorage, policyReads.watch == nil else { return }
        policyReads.watch = storage.policy.watch { [weak self] in
            Task { await self?.storedPolicyChanged() }
        }
    }

    /// The watch announced a change: the instance is not ready until a read made since is enforced.
    private func storedPolicyChanged() async {
        policyReads.announced = policyReads.next()
        await refreshStoredPolicy()
    }

    /// Reads the shared decisions again (outside the operation slot) and, when they changed the policy, brings the
    /// modules in line (in it).
    func refreshStoredPolicy() async {
        guard (try? requireRunning()) != nil, let read = await readStoredPolicy() else { return }
        try? await exclusively { () async throws(KernelError) in
            try requireRunning()
            defer { policyReads.enforced = max(policyReads.enforced, read.number) }
            guard let shared = policy(after: read), shared != policy else { return }
            logger.info(
                "stored policy changed",
                metadata: ["granted": "\(shared.granted.map(\.rawValue).sorted().joined(separator: ","))"])
            policy = shared
            await reconcile()
        }
    }
}

extension Kernel {
    /// What this instance's readiness depends on beyond its modules: with ``KernelOptions/externalStorage``, whether
    /// the storage answers, whether its change feed is proven alive (so that another instance's revoke reaches this
    /// one), and whether the modules follow the stored policy as last announced. Empty without external storage. A host
    /// reports itself not ready while any check fails: what it serves may differ from what the other instances serve.
    ///
    /// The stored policy's check fails before its first read, after a failed read, and from the moment a change is
    /// announced until a read made since is enforced (modules it revokes deactivated).
    public func readinessChecks() -> [ReadinessCheck] {
        guard let storage = options.externalStorage else { return [] }
        let detail: String
        if let problem = policyReads.problem {
            detail = "\(problem.message) \(problem.fix)"
        } else if policyReads.readAt == nil {
            detail = "not read from \(storage.description) yet"
        } else if policyReads.announced > policyReads.enforced {
            detail = "a change announced by \(storage.description) is not enforced yet"
        } else {
            detail = "read from \(storage.description)"
        }
        let passing =
            policyReads.problem == nil && policyReads.readAt != nil && policyReads.announced <= policyReads.enforced
        let policyCheck = ReadinessCheck(
            name: "stored policy", passing: passing, detail: detail,
            sincePassed: policyReads.readAt.map { clock.now() - $0 })
        return storage.checks() + [policyCheck]
    }
}
