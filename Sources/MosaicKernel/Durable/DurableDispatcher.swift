internal import Logging
internal import Mosaic
internal import Synchronization

/// One handler's deliveries on this instance: claims them in batches when woken (a new event, or the periodic look
/// for retries that fell due and claims that lapsed), runs the handler on each within its time limit, and records
/// the outcome: done, retried after a backoff, or parked after the last attempt.
struct DurableDispatcher: Sendable {
    let outbox: DurableOutbox
    let subscriber: String
    let logger: Logger
    /// Decodes the delivery and runs the module's handler on it.
    let deliver: @Sendable (DurableDelivery) async throws -> Void

    private var store: any DurableEventStore { outbox.store }
    private var options: DurableEventOptions { outbox.options }
    private var clock: KernelClock { outbox.clock }

    /// Hands out deliveries until cancelled (the module deactivates); claims it will not get to are released.
    func run() async {
        let (bell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let watch = store.watch { [subscriber] woken in if woken == subscriber { ring.yield() } }
        defer { watch.cancel() }
        ring.yield()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [clock, options] in
                while (try? await clock.sleep(clock.now() + options.pollInterval)) != nil { ring.yield() }
            }
            for await _ in bell { await drain() }
            group.cancelAll()
        }
    }

    /// Claims and handles batches until none is due.
    private func drain() async {
        while !Task.isCancelled {
            let claimed: [DurableDelivery]
            do {
                claimed = try await store.claim(subscriber, limit: options.batchSize, lease: options.claimLease)
            } catch {
                logger.warning(
                    "could not claim durable events for \(subscriber); trying again shortly",
                    metadata: ["error": "\(error)"])
                return
            }
            guard !claimed.isEmpty else { return }
            let claimedAt = clock.now()
            var done: [Int64] = []
            for (position, delivery) in claimed.enumerated() {
                // A handler starts only while the claim has at least half its lease left, which covers its limit.
                guard !Task.isCancelled, clock.now() - claimedAt < options.claimLease / 2 else {
                    try? await store.release(claimed[position...].map(\.id))
                    break
                }
                if await handle(delivery) { done.append(delivery.id) }
            }
            await complete(done)
        }
    }

    /// Records the batch's handled deliveries as done, in one write: a crash before it repeats them (at least
    /// once), which costs less than a write per event.
    private func complete(_ done: [Int64]) async {
        guard !done.isEmpty else { return }
        do {
            try await store.complete(done)
            count("completed", by: done.count)
        } catch {
            // The claims lapse and the deliveries are attempted again: at least once, never lost.
            logger.warning(
                "could not record \(done.count) of \(subscriber)'s deliveries as done; they will be attempted again",
                metadata: ["error": "\(error)"])
        }
    }

    /// Runs the handler on `delivery`; `true` when it succeeded (the caller records it done), else records the
    /// failure: a retry after a backoff, or parked.
    private func handle(_ delivery: DurableDelivery) async -> Bool {
        let outcome = await runWithinLimit { try await deliver(delivery) }
        do {
            switch outcome {
            case .success:
                return true
            case .failure where Task.isCancelled:
                // The module is deactivating: the attempt did not fail, it was cut short.
                try await store.release([delivery.id])
            case .failure(let error as UnreadableEvent):
                try await park(delivery, error.description)
            case .failure(let error) where delivery.attempt >= options.maximumAttempts:
                try await park(delivery, "\(error)")
            case .failure(let error):
                let delay = options.retryDelay(after: delivery.attempt)
                logger.warning(
                    "durable handler \(subscriber) failed attempt \(delivery.attempt) of \(options.maximumAttempts)",
                    metadata: ["event": "\(delivery.event)", "retry-in": "\(delay)", "error": "\(error)"])
                try await store.retry(delivery.id, after: delay, error: "\(error)")
                count("retried")
            }
        } catch {
            // The claim lapses and the delivery is attempted again: at least once, never lost.
            logger.warning(
                "could not record the outcome of \(subscriber)'s delivery; it will be attempted again",
                metadata: ["event": "\(delivery.event)", "error": "\(error)"])
        }
        return false
    }

    private func park(_ delivery: DurableDelivery, _ error: String) async throws {
        logger.error(
            "durable handler \(subscriber) parked an event after \(delivery.attempt) attempts, until resubmitted",
            metadata: ["event": "\(delivery.event)", "error": "\(error)"])
        try await store.park(delivery.id, error: error)
        count("parked")
    }

    private func count(_ outcome: String, by amount: Int = 1) {
        outbox.telemetry.count(
            MetricName.durableDeliveries, [("subscriber", subscriber), ("outcome", outcome)], by: amount)
    }

    /// Runs `work`, giving up on it (cancelled, and reported timed out) once the handler time limit passes; a
    /// handler that ignores cancellation is left behind rather than waited for.
    private func runWithinLimit(_ work: @escaping @Sendable () async throws -> Void) async -> Result<Void, any Error> {
        let limit = options.handlerTimeLimit
        let deadline = clock.now() + limit
        let once = Mutex<CheckedContinuation<Result<Void, any Error>, Never>?>(nil)
        let finish: @Sendable (Result<Void, any Error>) -> Void = { result in
            once.withLock { continuation in
                continuation?.resume(returning: result)
                continuation = nil
            }
        }
        var tasks: [Task<Void, Never>] = []
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                once.withLock { $0 = continuation }
                if Task.isCancelled { finish(.failure(CancellationError())) }
                let handler = Task {
                    do {
                        try await work()
                        finish(.success(()))
                    } catch {
                        finish(.failure(error))
                    }
                }
                let timer = Task { [clock] in
                    guard (try? await clock.sleep(deadline)) != nil else { return }
                    handler.cancel()
                    finish(.failure(HandlerTimedOut(limit: limit)))
                }
                tasks = [handler, timer]
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
        for task in tasks { task.cancel() }
        return result
    }
}

/// A durable handler outlived its time limit.
struct HandlerTimedOut: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "the handler did not finish within its time limit (\(limit))" }
}
