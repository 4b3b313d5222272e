internal import Logging
internal import Mosaic
internal import Tracing

/// Boot and shutdown: the first and the last of the kernel's changing operations.
extension Kernel {
    /// Validates the catalog and activates every module that can run, in dependency order.
    ///
    /// Problems with single modules do not throw: they are in the report, and the other modules still start.
    /// - Throws: ``KernelError`` only when the kernel was already booted or shut down, or (`.cancelled`) when the
    ///   calling task was cancelled while another operation of the kernel ran: then nothing started.
    @discardableResult
    public func boot() async throws(KernelError) -> BootReport {
        try await exclusively { () async throws(KernelError) -> BootReport in
            switch status {
            case .idle: status = .running
            case .running: throw KernelError(.alreadyBooted, "The kernel is already booted; boot() runs once.")
            case .shutDown: throw KernelError(.shutDown, "The kernel was shut down; create a new one to boot again.")
            }
            let started = clock.now()
            let span = telemetry.startSpan(SpanName.boot, attributes: [SpanKey.modules: .int64(Int64(records.count))])
            // Before the first read succeeds, nothing is granted: an instance never runs a module another has
            // revoked access to. The watch starts first: a decision made after the read is announced, and applied
            // once the boot is done (the instance is not ready until then).
            watchStoredPolicy()
            let read = await readStoredPolicy()
            if options.externalStorage != nil { policy = read.flatMap { policy(after: $0) } ?? EntitlementPolicy.none }
            let starter: @Sendable (ModuleID, String) async -> Void = { [weak self] module, use in
                _ = try? await self?.start(module, for: use)
            }
            deeplinkRouter.setStarter(starter)
            eventHub.standbySubscribers.setStarter(starter)
            await within(span) {
                let validation = telemetry.startSpan(SpanName.validate)
                for index in records.indices { validate(index) }
                reportUnknownIsolatedModules()
                validation.attributes.set(SpanKey.diagnostics, value: .int64(Int64(graph.diagnostics.count)))
                validation.end()
                await reconcile()
            }
            if let read { policyReads.enforced = max(policyReads.enforced, read.number) }
            watchConfiguration()
            watchStrandedHandlers()
            bootDuration = clock.now() - started
            telemetry.record(MetricName.bootDuration, [], bootDuration)
            span.end()
            let report = self.report()
            report.log(to: logger)
            return report
        }
    }

    /// Deactivates every active module, dependents before their dependencies, and ends every feed of state changes.
    /// Calling it again does nothing.
    public func shutdown() async {
        await exclusivelyEvenIfCancelled {
            guard status != .shutDown else { return }
            status = .shutDown
            configurationReads.watch?.cancel()
            configurationReads.watch = nil
            policyReads.stop()
            strandedSweep?.cancel()
            strandedSweep = nil
            for module in isolation.all { module.cancelCrashHandling() }
            let span = telemetry.startSpan(SpanName.shutdown)
            await within(span) { await deactivate(records.indices.filter { records[$0].isActive }) }
            span.end()
            logger.info("Mosaic kernel shut down", metadata: ["modules": "\(records.count)"])
            changes.finish()
            contributionHub.finish()
            deeplinkRouter.finish()
            eventHub.finish()
            stateHub.finish()
            configurationHub.finish()
            renderSignal.finish()
            // Another kernel may take the state directory's outbox over now.
            embedded?.file.releaseLock()
        }
    }
}
