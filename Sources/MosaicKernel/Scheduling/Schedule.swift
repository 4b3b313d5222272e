internal import HeapModule
internal import Mosaic
internal import Tracing

/// One module's activation or deactivation, run by a worker task (see ``JobPool``) that the kernel can give up on
/// when the module never returns.
typealias ModuleJob = @Sendable () async throws -> JobResult

/// What a finished job hands back: an activation's module instance and the context it was activated with (the job
/// makes the context on its worker, off the kernel's actor); nothing for other jobs.
struct JobResult: Sendable {
    var module: (any Module)?
    var context: ActivationContext?

    static let nothing = JobResult(module: nil, context: nil)
}

/// How a job ended, and how long it ran.
struct Outcome: Sendable {
    enum Result: Sendable {
        case finished(JobResult)
        case threw(any Error)
        case timedOut
    }

    var result: Result
    var duration: Duration

    /// An outcome handed in by a worker, with the position of its module.
    typealias Handed = (index: Int, outcome: Outcome)
}

/// The bookkeeping of one run of jobs in dependency order. It lives on the kernel's actor and is touched only
/// there, so it needs no lock of its own; what the workers share with the kernel is in ``pool``.
final class Schedule {
    enum Kind: Equatable {
        case activation
        case deactivation
        /// Running the participants of a lifecycle phase.
        case phase(LifecyclePhase)
        /// Delivering a host event to its listeners.
        case event(HostEvent)
    }

    /// Distinguishes this run from earlier ones, whose late timers must be ignored.
    let run: Int
    let kind: Kind
    /// For each position, how many of the positions it waits on are not done yet.
    var waiting: [Int]
    /// For each position, the positions waiting on it.
    let waiters: [[Int]]
    /// The positions ready to start, each as its ``key(_:)``: the lowest key starts first.
    var ready: Heap<Int>
    /// Whether the last positions start first (deactivation), not the first ones.
    let descending: Bool
    let size: Int
    /// How many positions ``nextReady()`` handed out that are not done yet, and how many may be.
    var underway = 0
    let window: Int
    var remaining: Int
    /// The jobs started and not yet run, the workers running them, and their outcomes.
    let pool: JobPool
    var completion: CheckedContinuation<Void, Never>?
    /// The service context of the operation the run belongs to: its jobs' spans are children of it.
    var parent: ServiceContext?
    /// The span of each job under way (only when a tracer records them).
    var spans: [Int: any Span] = [:]

    /// A run over `positions` of a graph of `size` modules, each waiting on the positions `waitsOn` visits that are
    /// themselves in the run (`waitsOn(p, visit)` calls `visit` once per position `p` waits on).
    init(
        run: Int, kind: Kind, timeLimit: Duration, width: Int, positions: [Int], size: Int,
        waitsOn: (Int, (Int) -> Void) -> Void
    ) {
        self.run = run
        self.kind = kind
        self.pool = JobPool(width: width, timeLimit: timeLimit)
        self.remaining = positions.count
        self.descending = kind == .deactivation
        self.size = size
        self.window = Self.jobsAheadPerWorker * width
        var member = [Bool](repeating: false, count: size)
        for index in positions { member[index] = true }
        var waiting = [Int](repeating: 0, count: size)
        var waiters = [[Int]](repeating: [], count: size)
        for index in positions {
            waitsOn(index) { prerequisite in
                guard member[prerequisite] else { return }
                waiting[index] += 1
                waiters[prerequisite].append(index)
            }
        }
        let ready = positions.filter { waiting[$0] == 0 }
        self.waiting = waiting
        self.waiters = waiters
        // Set empty first: `key` may be called once every property is.
        self.ready = Heap()
        self.ready = Heap(ready.map(key))
    }

    /// How many jobs per worker may be started ahead of the workers: enough that a worker never waits for the
    /// kernel's next turn, few enough that the lowest ready positions go first, so that a boot reads the modules'
    /// records in about their order in memory.
    static let jobsAheadPerWorker = 32

    /// The order ready positions start in: the lowest position first, or the highest when deactivating.
    private func key(_ index: Int) -> Int {
        descending ? size - 1 - index : index
    }

    /// Marks `index` done and readies whatever waited only on it.
    func done(_ index: Int) {
        remaining -= 1
        underway -= 1
        for waiter in waiters[index] {
            waiting[waiter] -= 1
            if waiting[waiter] == 0 { ready.insert(key(waiter)) }
        }
    }

    /// The next position to start: the first ready one in ``key(_:)``'s order, unless ``window`` positions are under
    /// way already.
    func nextReady() -> Int? {
        guard underway < window, let key = ready.popMin() else { return nil }
        underway += 1
        // The key is its own inverse.
        return self.key(key)
    }

}
