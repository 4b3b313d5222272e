internal import Logging
internal import Mosaic

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

    /// The policy the shared decisions make over the host's defaults, or `nil` without shared storage. When the
    /// decisions cannot be read it grants nothing (an instance never runs a module another has revoked access to),
    /// and ``sharedPolicyProblem`` says why until they can.
    func sharedPolicy() async -> EntitlementPolicy? {
        guard let storage = options.sharedStorage else { return nil }
        do {
            var shared = defaultPolicy
            for (entitlement, granted) in try await storage.policy.decisions() {
                if granted { shared.grant(entitlement) } else { shared.revoke(entitlement) }
            }
            sharedPolicyProblem = nil
            return shared
        } catch {
            sharedPolicyProblem = Diagnostic(
                .sharedPolicyUnavailable, .error, modules: [],
                message: "The entitlement policy in \(storage.description) could not be read (\(error)); nothing is "
                    + "granted until it can be.",
                fix: "Check that the database is reachable; the policy is read again when it is.")
            logger.error("shared policy unavailable", metadata: ["error": "\(error)"])
            return EntitlementPolicy.none
        }
    }

    /// Applies other instances' decisions as they arrive, until shutdown.
    func watchSharedPolicy() {
        guard let storage = options.sharedStorage, policyWatch == nil else { return }
        policyWatch = storage.policy.watch { [weak self] in
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
