internal import Mosaic
internal import Synchronization

/// A clock that moves only when a test says so, for kernel time limits and delays without waiting or races.
///
/// ```swift
/// let clock = ManualClock()
/// var harness = TestHarness(WeatherModule.self)
/// harness.options.clock = clock
/// harness.hangActivation(of: WeatherModule.manifest.id)
/// try await harness.run { app in … }
/// ```
/// ``advance(by:)`` wakes every sleeper whose deadline has come; ``sleepers(reaching:dueWithin:)`` waits until the code
/// under test has started its timers, so that a test advances time only once they are set.
public final class ManualClock: Clock, Sendable {
    /// A point on a manual clock: the time advanced since the clock was made.
    public struct Instant: InstantProtocol, Sendable, CustomStringConvertible {
        /// The time advanced since the clock was made.
        public var offset: Duration

        /// The instant `offset` after the clock was made.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later (earlier, if negative).
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`; negative if `other` is earlier.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// The offset, such as `10.0 seconds`.
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var next = 0
        var watchers: [(count: Int, window: Duration?, continuation: CheckedContinuation<Void, Never>)] = []

        /// How many tasks sleep until at most `window` from now (all of them for `nil`).
        func sleeperCount(dueWithin window: Duration?) -> Int {
            guard let window else { return sleepers.count }
            let limit = now.advanced(by: window)
            return sleepers.values.count { $0.deadline <= limit }
        }
    }

    private let state = Locked(State())

    /// A clock at offset zero.
    public init() {}

    /// The time advanced so far; it changes only in ``advance(by:)``.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: a sleeper wakes exactly when time reaches its deadline.
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on the clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until ``advance(by:)`` reaches `deadline`, returning at once if it has passed already.
    ///
    /// Throws `CancellationError` if the task is cancelled first; `tolerance` is ignored.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let token = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, ready) = state.withLock {
                    state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if deadline <= state.now { return (.success(()), []) }
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    state.sleepers[token] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, Self.readyWatchers(&state))
                }
                for watcher in ready { watcher.resume() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: token) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let (woken, ready) = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }.sorted {
                $0.value.deadline < $1.value.deadline
            }
            for (token, _) in due { state.sleepers[token] = nil }
            // Sleepers left may now be due within a watcher's window.
            return (due.map(\.value.continuation), Self.readyWatchers(&state))
        }
        for continuation in woken { continuation.resume() }
        for watcher in ready { watcher.resume() }
    }

    /// Returns once at least `count` tasks sleep on the clock (the code under test has set its timers); with
    /// `window`, only tasks that sleep until at most `window` from now count, so that a test waiting for one timer
    /// (an activation's time limit) is not misled by others set meanwhile (a storage call's longer one).
    public func sleepers(reaching count: Int, dueWithin window: Duration? = nil) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.sleeperCount(dueWithin: window) >= count { return true }
                state.watchers.append((count, window, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    private static func readyWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let snapshot = state
        let (ready, waiting) = (
            snapshot.watchers.filter { $0.count <= snapshot.sleeperCount(dueWithin: $0.window) },
            snapshot.watchers.filter { $0.count > snapshot.sleeperCount(dueWithin: $0.window) }
        )
        state.watchers = waiting
        return ready.map(\.continuation)
    }
}
