internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// What a handler's run of one delivery did, when it succeeded.
enum DeliveryOutcome: Sendable {
    /// The handler is done: the dispatcher records the delivery done, with the rest of its batch.
    case handled
    /// The handler recorded a transaction: it commits with the delivery's completion, and with the other recorded
    /// transactions of the batch, in one commit.
    case recorded(StateTransaction)
}

/// Commits the transactions handlers recorded for deliveries of one claim, each with its delivery's completion;
/// the outcome of each delivery's (stale, or the error that kept it from committing, when it did not).
typealias RecordedCommit =
    @Sendable (_ recorded: [(delivery: Int64, transaction: StateTransaction)], _ claim: UUID) async -> [Int64: Result<
        Void, any Error
    >]

/// One handler's deliveries on this instance: claims them in batches when woken (a new event, or the periodic look
/// for retries that fell due and claims that lapsed), runs the handler on each within its time limit, and records
/// the outcome: done, retried after a backoff, or parked after the last attempt.
struct DurableDispatcher: Sendable {
    let outbox: DurableOutbox
    let subscriber: String
    let logger: Logger
    /// Decodes the delivery and runs the module's handler on it.
    let deliver: @Sendable (DurableDelivery) async throws -> DeliveryOutcome
    /// Commits what a handler that takes a transaction recorded, a batch at a time.
    let commit: RecordedCommit?
    /// Ends a handler call that outlives its time limit.
    private let watch = HandlerWatch()
    /// Tells of an attempt that ended after its time limit.
    private let reportLate: @Sendable (Result<DeliveryOutcome, any Error>) -> Void

    init(
        outbox: DurableOutbox, subscriber: String, logger: Logger,
        deliver: @escaping @Sendable (DurableDelivery) async throws -> DeliveryOutcome, commit: RecordedCommit? = nil
    ) {
        self.outbox = outbox
        self.subscriber = subscriber
        self.logger = logger
        self.deliver = deliver
        self.commit = commit
        reportLate = Self.lateReporter(subscriber: subscriber, logger: logger, telemetry: outbox.telemetry)
    }

    private var store: any DurableEventStore { outbox.store }
    private var options: DurableEventOptions { outbox.options }
    private var clock: KernelClock { outbox.clock }

    /// Hands out deliveries until cancelled (the module deactivates); claims it will not get to are released.
    func run() async {
        let (bell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let storeWatch = store.watch { [subscriber] woken in if woken == subscriber { ring.yield() } }
        defer { storeWatch.cancel() }
        // Not a child task: it must outlive the cancellation of this one, while a cancelled handler is waited for.
        let watching = Task { [self] in await self.watch.run(on: clock, limit: options.handlerTimeLimit) }
        defer {
            self.watch.stop()
            watching.cancel()
        }
        ring.yield()
        var recording: Task<Void, Never>?
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [clock, options] in
                while (try? await clock.sleep(clock.now() + options.pollInterval)) != nil { ring.yield() }
            }
            for await _ in bell {
                outbox.activity.begin()
                recording = await drain(after: recording)
                outbox.activity.end()
            }
            group.cancelAll()
        }
        await recording?.value
    }

    /// Claims and handles batches until none is due. The next batch is claimed while one is handled, and a batch's
    /// completions are recorded while the next is handled: the round trips overlap the handling, and there are
    /// never two claims nor two recordings under way at once. Returns the last recording, still under way, so that
    /// an event published meanwhile is claimed without waiting for it; the next drain waits for it before it records
    /// (`previous`). Until recorded, its deliveries stay claimed (while the lease lasts), so no claim takes them again.
    private func drain(after previous: Task<Void, Never>?) async -> Task<Void, Never>? {
        var recording = previous
        var batch = await claimBatch()
        while let (claimed, claimedAt) = batch {
            let next = Task.isCancelled ? nil : Task { await claimBatch() }
            var done: [Int64] = []
            var recorded: [(delivery: DurableDelivery, transaction: StateTransaction)] = []
            for (position, delivery) in claimed.enumerated() {
                // A handler starts only while the lease has room for it and, after it, for recording the batch.
                guard !Task.isCancelled,
                    clock.now() - claimedAt < options.claimLease - options.handlerTimeLimit * 2
                else {
                    let rest = claimed[position...].map(\.id)
                    _ = try? await outbox.withinTimeLimit { try await $0.release(rest, claim: delivery.claim) }
                    break
                }
                switch await handle(delivery) {
                case .handled: done.append(delivery.id)
                case .recorded(let transaction): recorded.append((delivery, transaction))
                case nil: break
                }
            }
            await recording?.value
            let claim = claimed[0].claim
            outbox.activity.begin()
            recording = Task { [done, recorded, outbox] in
                await commitRecorded(recorded, claim: claim)
                await complete(done, claim: claim)
                outbox.activity.end()
            }
            batch = await next?.value
        }
        return recording
    }

    /// Claims the next batch of due deliveries, with the time its lease started; `nil` when none is due, the
    /// claim failed or did not answer within the storage time limit (the next wake tries again), or the handler is
    /// stopping (which waits for no claim's answer).
    private func claimBatch() async -> (deliveries: [DurableDelivery], claimedAt: Duration)? {
        guard !Task.isCancelled else { return nil }
        // Read before the claim, so the lease is never thought longer than it is.
        let claimedAt = clock.now()
        do {
            let claimed = try await outbox.claim(for: subscriber)
            return claimed.isEmpty ? nil : (claimed, claimedAt)
        } catch {
            // A claim cut short by the module stopping is no failure.
            guard !Task.isCancelled else { return nil }
            logger.warning(
                "could not claim durable events for \(subscriber); trying again shortly",
                metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Records the batch's handled deliveries as done, in one write: a crash before it repeats them (at least
    /// once), which costs less than a write per event.
    private func complete(_ done: [Int64], claim: UUID) async {
        guard !done.isEmpty else { return }
        do {
            let completed = try await outbox.withinTimeLimit { try await $0.complete(done, claim: claim) }
            count("completed", by: completed)
            if completed < done.count {
                // Their leases ran out while the batch was handled, and other claims took them: handled twice.
                let taken = done.count - completed
                logger.warning(
                    "\(taken) of \(subscriber)'s handled deliveries were taken over by another claim before they were recorded done; they are handled again there"
                )
                count("stale", by: taken)
            }
        } catch {
            // The claims lapse and the deliveries are attempted again: at least once, never lost.
            logger.warning(
                "could not record \(done.count) of \(subscriber)'s deliveries as done; they will be attempted again",
                metadata: ["error": "\(error)"])
        }
    }

    /// Commits the batch's recorded transactions with their deliveries' completions, in one commit (a delivery
    /// whose transaction cannot commit with the others is committed alone, or its attempt failed); a delivery whose
    /// claim ran out meanwhile is stale, and neither its effects nor its completion are stored.
    private func commitRecorded(
        _ recorded: [(delivery: DurableDelivery, transaction: StateTransaction)], claim: UUID
    ) async {
        guard let commit, !recorded.isEmpty else { return }
        let outcomes = await commit(recorded.map { ($0.delivery.id, $0.transaction) }, claim)
        for (delivery, _) in recorded {
            switch outcomes[delivery.id] {
            case .success?:
                count("completed")
            case .failure(let error as StaleDelivery)?:
                logger.warning(
                    "attempt \(delivery.attempt) of a delivery to \(subscriber) was stale: \(error)",
                    metadata: ["event": "\(delivery.event)"])
                count("stale")
            case .failure(let error)?:
                await recordFailure(delivery, error)
            case nil:
                await recordFailure(delivery, StaleDelivery(deliveries: [delivery.id]))
            }
        }
    }

    /// Runs the handler on `delivery`: what it did when it succeeded (the caller records it), else `nil` once the
    /// failure is recorded: a retry after a backoff, or parked.
    private func handle(_ delivery: DurableDelivery) async -> DeliveryOutcome? {
        let outcome = await runWithinLimit { try await deliver(delivery) }
        switch outcome {
        case .success(let done):
            return done
        case .failure(let error):
            await recordFailure(delivery, error)
            return nil
        }
    }

    /// Records that `delivery`'s attempt failed with `error`: claimable again at once when the module stopped it,
    /// parked when it cannot be read or was the last attempt, retried after a backoff otherwise.
    private func recordFailure(_ delivery: DurableDelivery, _ error: any Error) async {
        do {
            switch error {
            case _ where Task.isCancelled && !(error is BoundaryError):
                // The module is deactivating: the attempt did not fail, it was cut short. (An isolated module's
                // process that ended during the attempt did fail it, though the module is failing meanwhile: that
                // counts, so a delivery that crashes every process it reaches is parked after its last attempt.)
                try await outbox.withinTimeLimit { try await $0.release([delivery.id], claim: delivery.claim) }
            case let error as UnreadableEvent:
                try await park(delivery, error.description)
            case let error where delivery.attempt >= options.maximumAttempts:
                try await park(delivery, "\(error)")
            case let error:
                let delay = options.retryDelay(after: delivery.attempt)
                logger.warning(
                    "durable handler \(subscriber) failed attempt \(delivery.attempt) of \(options.maximumAttempts)",
                    metadata: ["event": "\(delivery.event)", "retry-in": "\(delay)", "error": "\(error)"])
                try await outbox.withinTimeLimit {
                    try await $0.retry(delivery.id, claim: delivery.claim, after: delay, error: "\(error)")
                }
                count("retried")
            }
        } catch {
            // The claim lapses and the delivery is attempted again: at least once, never lost.
            logger.warning(
                "could not record the outcome of \(subscriber)'s delivery; it will be attempted again",
                metadata: ["event": "\(delivery.event)", "error": "\(error)"])
        }
    }

    /// Reports the outcome of an attempt that ended after its time limit, when the delivery was already retried: what
    /// a transactional handler recorded then is never committed, so its effects are not stored twice; an effect
    /// outside Mosaic may have been made. One closure per handler, which
    /// each attempt's task holds, rather than a copy of the dispatcher.
    private static func lateReporter(
        subscriber: String, logger: Logger, telemetry: Telemetry
    ) -> @Sendable (Result<DeliveryOutcome, any Error>) -> Void {
        { result in
            switch result {
            case .success:
                logger.warning(
                    "a handler attempt of \(subscriber) finished after its time limit; it was retried already")
            case .failure(let error):
                logger.warning(
                    "a handler attempt of \(subscriber) that outlived its time limit ended",
                    metadata: ["error": "\(error)"])
            }
            telemetry.count(MetricName.durableDeliveries, [("subscriber", subscriber), ("outcome", "late")], by: 1)
        }
    }

    private func park(_ delivery: DurableDelivery, _ error: String) async throws {
        logger.error(
            "durable handler \(subscriber) parked an event after \(delivery.attempt) attempts, until resubmitted",
            metadata: ["event": "\(delivery.event)", "error": "\(error)"])
        try await outbox.withinTimeLimit { try await $0.park(delivery.id, claim: delivery.claim, error: error) }
        count("parked")
    }

    private func count(_ outcome: String, by amount: Int = 1) {
        outbox.telemetry.count(
            MetricName.durableDeliveries, [("subscriber", subscriber), ("outcome", outcome)], by: amount)
    }

    /// Runs `work` within the handler time limit: past it, the work is cancelled and the attempt reported timed
    /// out (a handler that ignores cancellation is left behind, not waited for). When the caller is cancelled (the
    /// module deactivates), the work is cancelled too and waited for, up to the same limit, so that it never runs
    /// beside the module's `deactivate()` nor beside another instance that takes the delivery over.
    private func runWithinLimit(
        _ work: @escaping @Sendable () async throws -> DeliveryOutcome
    ) async -> Result<DeliveryOutcome, any Error> {
        guard !Task.isCancelled else { return .failure(CancellationError()) }
        let deadline = clock.now() + options.handlerTimeLimit
        let run = HandlerRun()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                run.wait(continuation)
                let reportLate = reportLate
                let handler = Task {
                    let result: Result<DeliveryOutcome, any Error>
                    do {
                        result = .success(try await work())
                    } catch {
                        result = .failure(error)
                    }
                    // Past its time limit nothing waits for the outcome any more; it is still told.
                    if !run.finish(result) { reportLate(result) }
                }
                run.started(handler)
                watch.arm(run, until: deadline)
            }
        } onCancel: {
            run.cancel()
        }
        watch.disarm(run)
        return result
    }
}
