internal import Mosaic

/// The clock the kernel reads for every time limit, delay and timing: ``KernelOptions/clock`` opened once, read
/// as the time elapsed since the kernel was made.
package struct KernelClock: Sendable {
    /// The time elapsed since the kernel was made.
    package let now: @Sendable () -> Duration
    /// Suspends until `now()` reaches the deadline, or throws when the task is cancelled first.
    package let sleep: @Sendable (_ until: Duration) async throws -> Void

    package init(_ clock: any Clock<Duration>) {
        self = Self.open(clock)
    }

    private init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    private static func open<C: Clock<Duration>>(_ clock: C) -> KernelClock {
        let origin = clock.now
        return KernelClock(
            now: { origin.duration(to: clock.now) },
            sleep: { deadline in
                try await clock.sleep(until: origin.advanced(by: min(deadline, .longestWait)), tolerance: nil)
            })
    }
}
