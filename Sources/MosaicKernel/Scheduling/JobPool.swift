internal import Mosaic
internal import Synchronization
internal import Tracing

/// The jobs of one run that wait for a worker, the worker tasks that run them, and the outcomes waiting for the
/// kernel. Shared by the kernel's actor and the workers, so it sits behind a lock.
///
/// A worker is a task that runs ready jobs one after the other, so a run pays one task per worker (at most
/// ``KernelOptions/maximumConcurrentActivations``), not one per module, and a worker that finishes a job while the
/// kernel already has outcomes to read adds its own without a hop to the kernel's actor. Each job still has its
/// own time limit, counted from when its worker starts it: a worker whose job outlives the limit is cancelled and
/// given up, and the jobs behind it go to the other workers (or a new one).
final class JobPool: Sendable {
    /// A job ready to run: the module's position, its work, and the service context its span gives it.
    struct Job: Sendable {
        let index: Int
        let work: ModuleJob
        /// The context of the job's span, to run it in; `nil` without a tracer.
        let context: ServiceContext?
    }

    /// What a worker should do after handing in an outcome.
    enum Receipt {
        /// The outcome is the kernel's; when `tellKernel`, the kernel was not told of waiting outcomes yet.
        case taken(tellKernel: Bool)
        /// The kernel gave up on the job (it timed out): the worker deals with a late module itself, and stops.
        case abandoned
    }

    private struct Worker {
        var task: Task<Void, Never>?
        /// The job under way and the clock's reading when it started.
        var current: (index: Int, started: Duration)?
    }

    private struct State {
        /// The jobs added, each taken out (set to `nil`) when a worker starts it: the worker, not the lock's
        /// holder, then releases what the job captured, once it has run.
        var waiting: [Job?] = []
        var waitingHead = 0
        /// Each worker by identifier (its position); `nil` once it stopped or was given up on. (An array, not a
        /// dictionary: changing a dictionary's value in place allocated twice per job.)
        var workers: [Worker?] = []
        /// Workers not stopped or given up on.
        var alive = 0
        /// Workers running a job (the others are about to take one, or to stop).
        var busy = 0
        var outcomes: [Outcome.Handed] = []
        /// Whether a worker is on its way to tell the kernel that ``outcomes`` has something.
        var kernelTold = false
        var timer: Task<Void, Never>?
        var timerArmed = false
        var closed = false
    }

    let width: Int
    let timeLimit: Duration
    private let state = Locked(State())

    init(width: Int, timeLimit: Duration) {
        self.width = width
        self.timeLimit = timeLimit
    }

    /// Adds ready jobs; returns the identifiers of the workers to start (already counted as alive) for the jobs
    /// waiting, these and any left behind by a worker given up on.
    func add(_ jobs: [Job]) -> [Int] {
        state.withLock { state in
            state.waiting.append(contentsOf: jobs.lazy.map { $0 })
            let idle = state.alive - state.busy
            let wanted = min(width - state.alive, state.waiting.count - state.waitingHead - idle)
            guard wanted > 0 else { return [] }
            state.alive += wanted
            let first = state.workers.count
            state.workers.append(contentsOf: repeatElement(Worker?.some(Worker()), count: wanted))
            return Array(first..<first + wanted)
        }
    }

    /// Records the task of worker `id`; cancels it at once when the kernel already gave up on its job (or the
    /// worker already stopped, when cancelling does nothing).
    func setTask(_ task: Task<Void, Never>, of id: Int) {
        let cancel = state.withLock { state -> Bool in
            guard state.workers[id] != nil else { return true }
            state.workers[id]?.task = task
            return false
        }
        if cancel { task.cancel() }
    }

    /// The next job for worker `id`, started now; `nil` (and the worker is gone) when none waits. `armTimer` is the
    /// deadline to watch when no timer watches one yet.
    func next(for id: Int, now: () -> Duration) -> (job: Job, started: Duration, armTimer: Duration?)? {
        state.withLock { state in
            // A slot is taken only here, as the head moves past it, so the slot at the head holds its job; an empty
            // one would be passed over, not trapped on.
            var taken: Job?
            while taken == nil, !state.closed, state.workers[id] != nil, state.waitingHead < state.waiting.count {
                taken = state.waiting[state.waitingHead].take()
                state.waitingHead += 1
                if state.waitingHead == state.waiting.count {
                    state.waiting.removeAll(keepingCapacity: true)
                    state.waitingHead = 0
                }
            }
            guard let job = taken else {
                Self.forget(id, in: &state)
                return nil
            }
            let started = now()
            state.workers[id]?.current = (job.index, started)
            state.busy += 1
            let arm = state.timerArmed ? nil : started + timeLimit
            if arm != nil { state.timerArmed = true }
            return (job, started, arm)
        }
    }

    /// Hands in the outcome of worker `id`'s job.
    func finish(_ id: Int, _ index: Int, _ outcome: Outcome) -> Receipt {
        state.withLock { state in
            guard state.workers[id] != nil else { return .abandoned }
            state.workers[id]?.current = nil
            state.busy -= 1
            state.outcomes.append((index, outcome))
            defer { state.kernelTold = true }
            return .taken(tellKernel: !state.kernelTold)
        }
    }

    /// The outcomes handed in since the kernel last read them.
    func takeOutcomes() -> [Outcome.Handed] {
        state.withLock { state in
            state.kernelTold = false
            defer { state.outcomes = [] }
            return state.outcomes
        }
    }

    /// Gives up every job that started at least ``timeLimit`` before `now`; returns them with their workers' tasks
    /// (to cancel), and the next deadline to watch, if a job is still under way.
    func abandonOverdue(now: Duration) -> (overdue: [(index: Int, task: Task<Void, Never>?)], next: Duration?) {
        state.withLock { state in
            var overdue: [(index: Int, task: Task<Void, Never>?)] = []
            var next: Duration?
            for id in state.workers.indices {
                guard let worker = state.workers[id], let current = worker.current else { continue }
                let deadline = current.started + timeLimit
                if deadline <= now {
                    // A worker given up on is forgotten: it no longer counts, so the jobs behind it get another.
                    Self.forget(id, in: &state)
                    state.busy -= 1
                    overdue.append((current.index, worker.task))
                } else {
                    next = min(next ?? deadline, deadline)
                }
            }
            state.timer = nil
            state.timerArmed = next != nil
            return (overdue.sorted { $0.index < $1.index }, next)
        }
    }

    /// Keeps `timer`, the task watching the earliest deadline; cancels it when the run is already over.
    func setTimer(_ timer: Task<Void, Never>) {
        let closed = state.withLock { state in
            if !state.closed { state.timer = timer }
            return state.closed
        }
        if closed { timer.cancel() }
    }

    /// Marks worker `id` stopped or given up on.
    private static func forget(_ id: Int, in state: inout State) {
        if state.workers[id] != nil { state.alive -= 1 }
        state.workers[id] = nil
    }

    /// Ends the run: no job is left, and the timer stops.
    func close() {
        let timer = state.withLock { state in
            state.closed = true
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }
}
