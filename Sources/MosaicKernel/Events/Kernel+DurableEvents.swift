internal import Logging
internal import Mosaic

/// The host's view of durable events no handler got: list them, and give them another round of attempts.
extension Kernel {
    /// Durable events a handler did not get, oldest first: parked after every attempt failed, or abandoned when the
    /// handler's module was uninstalled. Each stays until ``resubmit(_:)``.
    ///
    /// - Throws: ``KernelError`` when the outbox's storage cannot be read.
    public nonisolated func undeliveredEvents(limit: Int = 100) async throws(KernelError) -> [UndeliveredEvent] {
        do {
            let store = eventHub.outbox.store
            return try await withinStorageTimeLimit { try await store.undelivered(limit: max(0, limit)) }
        } catch {
            throw KernelError(
                .storageUnavailable,
                "The outbox could not be read (\(error)). Check that its database is reachable, then try again.")
        }
    }

    /// Gives an undelivered event's handler another round of attempts, counted from the first; `false` when
    /// `delivery` is not waiting (it was resubmitted already, or there is no such delivery) or its handler's module
    /// is not installed, so no handler would take it.
    ///
    /// - Throws: ``KernelError`` when the outbox's storage cannot be written.
    @discardableResult
    public nonisolated func resubmit(_ delivery: UndeliveredEvent.ID) async throws(KernelError) -> Bool {
        do {
            let store = eventHub.outbox.store
            let resubmitted = try await withinStorageTimeLimit { try await store.resubmit(delivery) }
            if resubmitted { logger.info("durable event resubmitted", metadata: ["delivery": "\(delivery)"]) }
            return resubmitted
        } catch {
            throw KernelError(
                .storageUnavailable,
                "Delivery \(delivery) could not be resubmitted (\(error)). Check that the outbox's database is "
                    + "reachable, then try again.")
        }
    }

    /// Returns once no durable handler of this kernel is claiming, handling or recording deliveries: a test waits
    /// for it before it moves a manual clock, so that no time limit of work in flight passes while the machine is
    /// slow.
    package nonisolated func durableWorkSettled() async {
        await eventHub.outbox.activity.settled()
    }

    /// `id` was uninstalled: its durable handlers take no more events, and their waiting ones are abandoned
    /// (listed by ``undeliveredEvents(limit:)``, and resubmittable once the module is back).
    func abandonDurableHandlers(of id: ModuleID) async {
        do {
            let store = eventHub.outbox.store
            try await withinStorageTimeLimit { try await store.abandon(module: id, reason: "\(id) was uninstalled") }
        } catch {
            logger.error(
                "the durable events waiting for \(id) could not be marked abandoned in time; they keep waiting for it",
                metadata: ["error": "\(error)"])
        }
    }
}
