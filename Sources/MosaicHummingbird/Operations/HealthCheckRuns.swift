internal import Mosaic
internal import MosaicKernel
internal import Synchronization

/// The modules' health checks as `/health/ready` reads them, so that probes cannot multiply the checks' work:
///
/// - one run at a time: a probe that comes during a run waits for its result;
/// - a result serves every probe for ``reuse`` after its run ended;
/// - a check still running after its time limit (it ignores cancellation) is counted, reported failing, and not
///   started again until it ends: a probe never adds a second copy of it.
final class HealthCheckRuns: Sendable {
    /// How long a run's result answers probes.
    static let reuse = Duration.seconds(1)

    private struct State {
        var last: (ended: Duration, failures: [String])?
        var running: Task<[String], Never>?
        /// The checks that outlived their time limit and have not ended yet, by ``key(_:_:)``.
        var overrunning: Set<String> = []
    }

    private let clock: KernelClock
    private let state = Locked(State())

    init(clock: KernelClock) {
        self.clock = clock
    }

    /// The failures of the latest run, when it ended within ``reuse``; else those of a new run of `run` (or of the
    /// one under way). The run is not the probe's: a probe that stops waiting does not cancel it.
    func failures(_ run: @escaping @Sendable () async -> [String]) async -> [String] {
        let now = clock.now()
        let answer = state.withLock { runs -> Answer in
            if let last = runs.last, now - last.ended < Self.reuse { return .kept(last.failures) }
            if let running = runs.running { return .running(running) }
            let task = Task { [self] in
                let failures = await run()
                state.withLock { runs in
                    runs.last = (clock.now(), failures)
                    runs.running = nil
                }
                return failures
            }
            runs.running = task
            return .running(task)
        }
        switch answer {
        case .kept(let failures): return failures
        case .running(let task): return await task.value
        }
    }

    private enum Answer {
        case kept([String])
        case running(Task<[String], Never>)
    }

    /// How many checks outlived their time limit and have not ended yet.
    var overrunningCount: Int { state.withLock { $0.overrunning.count } }

    /// Whether the check `key` outlived its time limit and is still running.
    func isOverrunning(_ key: String) -> Bool {
        state.withLock { $0.overrunning.contains(key) }
    }

    /// The check `key` outlived its time limit: it was cancelled, and is counted until it ends.
    func overran(_ key: String) {
        _ = state.withLock { $0.overrunning.insert(key) }
    }

    /// The check `key` ended.
    func ended(_ key: String) {
        _ = state.withLock { $0.overrunning.remove(key) }
    }

    /// What names a module's check among the runs.
    static func key(_ module: ModuleID, _ check: String) -> String {
        "\(module)/\(check)"
    }
}
