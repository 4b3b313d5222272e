/// How the kernel hands durable events to their handlers.
public struct DurableEventOptions: Sendable {
    /// How many times a delivery is attempted before it is parked; at least 1.
    public var maximumAttempts: Int
    /// The wait before the second attempt; each later wait doubles, up to ``maximumRetryDelay``, and is shortened
    /// by a random part of up to half (jitter), so that failed deliveries do not all come back at once.
    public var firstRetryDelay: Duration
    /// The longest wait between two attempts.
    public var maximumRetryDelay: Duration
    /// How long a handler may take with one event before the attempt counts as failed.
    public var handlerTimeLimit: Duration
    /// How long a claim keeps a delivery from other instances; a claim an instance holds longer (it crashed or
    /// hangs) is taken over. At least three times ``handlerTimeLimit``: an instance starts a handler only while
    /// the claim has two time limits left (one for the handler, one to record the batch), so a claim never lapses
    /// while its handler may still run.
    public var claimLease: Duration
    /// How often each handler looks for deliveries whose retry fell due or whose claim lapsed; new events wake it
    /// at once.
    public var pollInterval: Duration
    /// How many deliveries a handler claims at a time; at least 1. The batch's handled deliveries are recorded as
    /// done together, while the next batch is handled, so a crash repeats at most the handled events of two batches:
    /// the one being handled and the one whose record was being written (1: a write per event).
    public var batchSize: Int
    /// How long the deliveries of a handler nothing runs any more (renamed, or of a module no longer installed) wait
    /// before they are abandoned: listed, and resubmittable should the handler come back. See `StrandedHandler`.
    public var strandedRetention: Duration = .seconds(7 * 86_400)

    /// Options with defaults suited to an app: 8 attempts, 1 s doubling to at most 5 min, 30 s per handler call.
    public init(
        maximumAttempts: Int = 8, firstRetryDelay: Duration = .seconds(1), maximumRetryDelay: Duration = .seconds(300),
        handlerTimeLimit: Duration = .seconds(30), claimLease: Duration = .seconds(120),
        pollInterval: Duration = .seconds(1), batchSize: Int = 32
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.firstRetryDelay = firstRetryDelay
        self.maximumRetryDelay = max(firstRetryDelay, maximumRetryDelay)
        self.handlerTimeLimit = handlerTimeLimit
        self.claimLease = max(claimLease, handlerTimeLimit * 3)
        self.pollInterval = max(pollInterval, .milliseconds(10))
        self.batchSize = max(1, batchSize)
    }

    /// Options with every bound of `init` applied to these values.
    private init(bounding options: DurableEventOptions) {
        self.init(
            maximumAttempts: options.maximumAttempts, firstRetryDelay: options.firstRetryDelay,
            maximumRetryDelay: options.maximumRetryDelay, handlerTimeLimit: options.handlerTimeLimit,
            claimLease: options.claimLease, pollInterval: options.pollInterval, batchSize: options.batchSize)
        strandedRetention = max(.zero, options.strandedRetention)
    }

    /// These options with every bound applied again (a property set after `init` may have left one).
    var normalized: DurableEventOptions { DurableEventOptions(bounding: self) }

    /// The wait after failed attempt `attempt` (from 1): doubling from ``firstRetryDelay``, capped, with jitter.
    func retryDelay(after attempt: Int, jitter: Double = .random(in: 0...0.5)) -> Duration {
        var delay = firstRetryDelay
        for _ in 1..<max(1, attempt) where delay < maximumRetryDelay { delay *= 2 }
        return min(delay, maximumRetryDelay) * (1 - jitter)
    }
}
