internal import Logging
internal import Mosaic

/// How an instance follows the policy instances share: the watch on its changes, and how its reads went.
struct SharedPolicyReads {
    /// The watch on the shared policy's changes, from boot to shutdown.
    var watch: SharedWatch?
    /// Why the shared policy could not be read the last time it was, or `nil` when it could.
    var problem: Diagnostic?
    /// The next read after one failed, and the delay it waits (doubling with each failure).
    var retry: Task<Void, Never>?
    var retryDelay: Duration = .zero
    /// When the shared policy was last read successfully (the kernel's clock), or `nil` before the first read.
    var readAt: Duration?

    /// Ends the watch and any read that waits.
    mutating func stop() {
        watch?.cancel()
        watch = nil
        retry?.cancel()
        retry = nil
    }
}

/// The entitlement policy that instances share: every grant and revoke is recorded in shared storage first, each
/// instance applies the others' decisions as they come, and a new instance boots with the decisions so far.
extension Kernel {
    /// Records `entitlement`'s new decision in shared storage, if the kernel has one; throws when it cannot, so
    /// that no instance applies a decision the others never see.
    func share(_ entitlement: Entitlement, granted: Bool) async throws(KernelError) {
        guard let storage = options.sharedStorage else { return }
        do {
            try await storage.policy.decide(entitlement, granted: granted)
        } catch {
            throw KernelError(
                .sharedStorageUnavailable,
                "\(granted ? "Granting" : "Revoking") \(entitlement) could not be recorded in \(storage.description) "
                    + "(\(error)); nothing changed on any instance. Check the database, then try again.")
        }
    }

    /// The policy the shared decisions make over the host's defaults; `nil` without shared storage, or when the
    /// decisions cannot be read. A failed read changes nothing the kernel enforces: the policy read last stays (one
    /// failed read never switches modules off), ``SharedPolicyReads/problem`` says why, and the decisions are read again
    /// after a delay that doubles with each failure, from 1 s up to 30 s, until they can be.
    func sharedPolicy() async -> EntitlementPolicy? {
        guard let storage = options.sharedStorage else { return nil }
        do {
            var shared = defaultPolicy
            for (entitlement, granted) in try await storage.policy.decisions() {
                if granted { shared.grant(entitlement) } else { shared.revoke(entitlement) }
            }
            policyReads.problem = nil
            policyReads.retryDelay = .zero
            policyReads.readAt = clock.now()
            return shared
        } catch {
            let delay = min(max(policyReads.retryDelay * 2, .seconds(1)), .seconds(30))
            policyReads.problem = Diagnostic(
                .sharedPolicyUnavailable, .error, modules: [],
                message: "The entitlement policy in \(storage.description) could not be read (\(error)); the policy "
                    + "read last is kept (at boot, before any read, nothing is granted), and it is read again in "
                    + "\(delay).",
                fix: "Check that the database is reachable; the policy is read again until it can be.")
            logger.error("shared policy unavailable", metadata: ["error": "\(error)", "retry": "\(delay)"])
            readSharedPolicyAgain(after: delay)
            return nil
        }
    }

    /// Reads the shared decisions again `delay` from now (the kernel's clock), unless a read is already due.
    private func readSharedPolicyAgain(after delay: Duration) {
        guard policyReads.retry == nil, (try? requireRunning()) != nil else { return }
        policyReads.retryDelay = delay
        let deadline = clock.now() + delay
        policyReads.retry = Task { [weak self, clock] in
            guard (try? await clock.sleep(deadline)) != nil, let self else { return }
            await self.retrySharedPolicy()
        }
    }

    private func retrySharedPolicy() async {
        policyReads.retry = nil
        await refreshSharedPolicy()
    }

    /// Applies other instances' decisions as they arrive, until shutdown.
    func watchSharedPolicy() {
        guard let storage = options.sharedStorage, policyReads.watch == nil else { return }
        policyReads.watch = storage.policy.watch { [weak self] in
            Task { await self?.refreshSharedPolicy() }
        }
    }

    /// Reads the shared decisions again and, when they changed the policy, brings the modules in line.
    func refreshSharedPolicy() async {
        try? await exclusively { () async throws(KernelError) in
            try requireRunning()
            guard let shared = await sharedPolicy(), shared != policy else { return }
            logger.info(
                "shared policy changed",
                metadata: ["granted": "\(shared.granted.map(\.rawValue).sorted().joined(separator: ","))"])
            policy = shared
            await reconcile()
        }
    }
}

extension Kernel {
    /// What this instance's readiness depends on beyond its modules: with ``KernelOptions/sharedStorage``, whether
    /// the storage answers, whether its change feed is proven alive (so that another instance's revoke reaches this
    /// one), and whether the shared policy's last read succeeded. Empty without shared storage. A host reports
    /// itself not ready while any check fails: what it serves may differ from what the other instances serve.
    public func readinessChecks() -> [ReadinessCheck] {
        guard let storage = options.sharedStorage else { return [] }
        let policyCheck = ReadinessCheck(
            name: "shared policy", passing: policyReads.problem == nil,
            detail: policyReads.problem.map { "\($0.message) \($0.fix)" } ?? "read from \(storage.description)",
            sincePassed: policyReads.readAt.map { clock.now() - $0 })
        return storage.checks() + [policyCheck]
    }
}
