internal import Logging
public import Mosaic

/// A durable handler with deliveries waiting that nothing will run: renamed in a release, or of a module no longer
/// installed. Its deliveries are listed, and abandoned once nothing ran it for ``DurableEventOptions/strandedRetention``.
public struct StrandedHandler: Sendable, Hashable, Identifiable {
    /// Why nothing runs it.
    public enum Reason: String, Sendable, Hashable {
        /// Its module is not installed here (removed from the catalog, or uninstalled).
        case moduleNotInstalled = "module-not-installed"
        /// Its module is active here and did not register a handler of that name (it was renamed).
        case notRegistered = "not-registered"
    }

    /// The handler, as `module/name`.
    public let subscriber: String
    /// The handler's module.
    public let module: ModuleID
    /// How many deliveries wait for it.
    public let pending: Int
    /// Why nothing runs it.
    public let reason: Reason
    /// How long since an instance last ran it.
    public let idle: Duration
    /// How long until its deliveries are abandoned (zero: at the next sweep).
    public let abandonedIn: Duration
    /// The handler, which identifies it.
    public var id: String { subscriber }
}

extension Kernel {
    /// Lists the stranded durable handlers: those whose deliveries wait and that no live instance runs.
    ///
    /// A handler is stranded when its module is:
    /// - not installed here, or
    /// - active here without registering it (the handler was renamed or removed).
    ///
    /// A handler whose module is installed but not active (revoked, failed, on standby) is not stranded: its
    /// deliveries wait for the module, as they should.
    ///
    /// - Throws: ``KernelError`` when the outbox's storage cannot be read in time.
    public func strandedHandlers() async throws(KernelError) -> [StrandedHandler] {
        let store = eventHub.outbox.store
        let recorded: [RecordedHandler]
        do {
            recorded = try await withinStorageTimeLimit { try await store.handlersWithPendingDeliveries() }
        } catch {
            throw KernelError(
                .storageUnavailable,
                "The outbox's handlers could not be read (\(error)). Check that its database is reachable, then try "
                    + "again.")
        }
        let running = eventHub.outbox.runningHandlers
        let retention = options.durableEvents.strandedRetention
        return recorded.compactMap { handler in
            guard !handler.runElsewhere, !running.contains(handler.subscriber) else { return nil }
            let reason: StrandedHandler.Reason
            if let index = graph.position[handler.module] {
                guard records[index].isActive else { return nil }
                reason = .notRegistered
            } else {
                reason = .moduleNotInstalled
            }
            return StrandedHandler(
                subscriber: handler.subscriber, module: handler.module, pending: handler.pending, reason: reason,
                idle: handler.idle, abandonedIn: max(.zero, retention - handler.idle))
        }
    }

    /// Abandons the deliveries of every stranded handler nothing ran for the retention, with the reason.
    func abandonStrandedHandlers() async {
        let stranded: [StrandedHandler]
        do {
            stranded = try await strandedHandlers()
        } catch {
            logger.warning("could not look for stranded durable handlers", metadata: ["error": "\(error)"])
            return
        }
        let store = eventHub.outbox.store
        for handler in stranded where handler.abandonedIn == .zero {
            let why =
                handler.reason == .moduleNotInstalled
                ? "\(handler.module) is not installed" : "\(handler.module) no longer registers this handler"
            let reason =
                "\(why), and nothing ran \(handler.subscriber) for \(handler.idle) "
                + "(DurableEventOptions.strandedRetention)"
            do {
                try await withinStorageTimeLimit {
                    try await store.abandon(subscriber: handler.subscriber, reason: reason)
                }
                logger.warning(
                    "abandoned the deliveries of a stranded durable handler",
                    metadata: ["subscriber": "\(handler.subscriber)", "pending": "\(handler.pending)"])
            } catch {
                logger.warning(
                    "could not abandon a stranded durable handler's deliveries; trying again at the next sweep",
                    metadata: ["subscriber": "\(handler.subscriber)", "error": "\(error)"])
            }
        }
    }

    /// Sweeps for stranded handlers from boot to shutdown, once a retention (or an hour, when sooner).
    func watchStrandedHandlers() {
        guard strandedSweep == nil else { return }
        let interval = min(options.durableEvents.strandedRetention, .seconds(3_600))
        let clock = clock
        strandedSweep = Task { [weak self] in
            while (try? await clock.sleep(clock.now() + interval)) != nil {
                await self?.abandonStrandedHandlers()
            }
        }
    }
}
