internal import Mosaic
internal import Synchronization

/// One module's activation or deactivation, run in a task of its own so that a module that never returns can be
/// abandoned; returns the module instance when there is one to keep.
typealias Job = @Sendable () async throws -> (any Module)?

/// How a job ended, and how long it ran.
struct Outcome: Sendable {
    enum Result: Sendable {
        case finished((any Module)?)
        case threw(any Error)
        case timedOut
    }

    var result: Result
    var duration: Duration
}

/// Settles the race between a job finishing and its deadline passing: exactly one of them wins.
final class JobTicket: Sendable {
    private enum State { case running, finished, abandoned }
    private let state = Mutex(State.running)

    /// The job finished; `false` when the kernel had already given up on it.
    func finish() -> Bool { claim(.finished) }

    /// The deadline passed; `false` when the job had already finished.
    func abandon() -> Bool { claim(.abandoned) }

    private func claim(_ outcome: State) -> Bool {
        state.withLock { state in
            guard case .running = state else { return false }
            state = outcome
            return true
        }
    }
}

extension Kernel {
    /// Runs a job for each of `ids`, each once the ids it waits on are done, at most
    /// ``KernelOptions/maximumConcurrentActivations`` at a time, each within `timeLimit`.
    ///
    /// `start` returns `nil` to skip a module (it then counts as done at once). `finish` gets every outcome on the
    /// kernel's actor, so it may change the kernel's state. One timer covers every job: all share one time limit,
    /// so deadlines fall in launch order and only the earliest pending one needs watching. A job that outlives its
    /// limit is cancelled and reported timed out; should it finish later and hand back a module, that module is
    /// deactivated so that nothing it acquired leaks.
    func runInDependencyOrder(
        _ ids: [ModuleID],
        waitingOn: (ModuleID) -> [ModuleID],
        timeLimit: Duration,
        start: (ModuleID) -> Job?,
        finish: (ModuleID, Outcome) -> Void
    ) async {
        guard !ids.isEmpty else { return }
        enum Event: Sendable {
            case done(ModuleID, Outcome)
            case deadline
        }
        let (events, sink) = AsyncStream.makeStream(of: Event.self)
        var waiting: [ModuleID: Int] = [:]
        var waiters: [ModuleID: [ModuleID]] = [:]
        var ready: [ModuleID] = []
        var readyHead = 0
        for id in ids {
            let prerequisites = waitingOn(id)
            waiting[id] = prerequisites.count
            for prerequisite in prerequisites { waiters[prerequisite, default: []].append(id) }
            if prerequisites.isEmpty { ready.append(id) }
        }
        var remaining = ids.count
        var running: [ModuleID: (task: Task<Void, Never>, ticket: JobTicket)] = [:]
        var deadlines: [(id: ModuleID, at: ContinuousClock.Instant)] = []
        var deadlineHead = 0
        var timer: Task<Void, Never>?

        func done(_ id: ModuleID) {
            remaining -= 1
            for waiter in waiters[id] ?? [] {
                waiting[waiter, default: 1] -= 1
                if waiting[waiter] == 0 { ready.append(waiter) }
            }
        }
        func armTimer() {
            while deadlineHead < deadlines.count, running[deadlines[deadlineHead].id] == nil { deadlineHead += 1 }
            guard timer == nil, deadlineHead < deadlines.count else { return }
            timer = Self.wake(sink, with: .deadline, at: deadlines[deadlineHead].at)
        }
        func launch() {
            while running.count < options.maximumConcurrentActivations, readyHead < ready.count {
                let id = ready[readyHead]
                readyHead += 1
                guard let job = start(id) else {
                    done(id)
                    continue
                }
                let ticket = JobTicket()
                let task = Self.spawn(job, ticket: ticket) { sink.yield(.done(id, $0)) }
                running[id] = (task, ticket)
                deadlines.append((id, ContinuousClock.now.advanced(by: timeLimit)))
            }
            armTimer()
        }

        launch()
        for await event in events {
            switch event {
            case .done(let id, let outcome):
                running[id] = nil
                finish(id, outcome)
                done(id)
            case .deadline:
                timer = nil
                let now = ContinuousClock.now
                while deadlineHead < deadlines.count, deadlines[deadlineHead].at <= now {
                    let id = deadlines[deadlineHead].id
                    deadlineHead += 1
                    guard let job = running[id], job.ticket.abandon() else { continue }
                    running[id] = nil
                    job.task.cancel()
                    finish(id, Outcome(result: .timedOut, duration: timeLimit))
                    done(id)
                }
            }
            launch()
            if remaining == 0 { break }
        }
        timer?.cancel()
        sink.finish()
    }

    /// Starts `job` off the kernel's actor (task-local values still flow in). Reports the outcome unless the
    /// kernel gave up on the job first, in which case a module it hands back is deactivated instead.
    private nonisolated static func spawn(
        _ job: @escaping Job, ticket: JobTicket, report: @escaping @Sendable (Outcome) -> Void
    ) -> Task<Void, Never> {
        Task {
            let began = ContinuousClock.now
            let result: Outcome.Result
            do {
                result = .finished(try await job())
            } catch {
                result = .threw(error)
            }
            if ticket.finish() {
                report(Outcome(result: result, duration: began.duration(to: .now)))
            } else if case .finished(let module?) = result {
                await module.deactivate()
            }
        }
    }

    /// Yields `event` into `sink` at `deadline`, unless cancelled first.
    private nonisolated static func wake<Event: Sendable>(
        _ sink: AsyncStream<Event>.Continuation, with event: Event, at deadline: ContinuousClock.Instant
    ) -> Task<Void, Never> {
        Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            if !Task.isCancelled { sink.yield(event) }
        }
    }
}
