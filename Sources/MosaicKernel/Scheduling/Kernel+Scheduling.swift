internal import Mosaic
internal import Tracing

extension Kernel {
    /// Runs the activation, deactivation, phase participants or event listeners of each module at `positions`,
    /// each once those it waits on are done (its dependents when deactivating, else its dependencies), at most
    /// ``KernelOptions/maximumConcurrentActivations`` at a time, each within its time limit. Of the modules ready,
    /// the one at the lowest position starts first (the highest when deactivating; see ``Schedule/nextReady()``).
    ///
    /// Jobs run on a few worker tasks (see ``JobPool``), which hand outcomes back in batches: the kernel reads
    /// every outcome waiting when it is told of the first, and starts the jobs they ready. One timer covers every
    /// job: all share one time limit, so only the earliest pending deadline needs watching. A job that outlives
    /// its limit is cancelled and reported timed out; should it finish later and hand back a module, that module
    /// is deactivated so that nothing it acquired leaks.
    func runInDependencyOrder(_ positions: [Int], kind: Schedule.Kind) async {
        guard !positions.isEmpty else { return }
        runCount += 1
        let (required, optional, dependents) = (graph.required, graph.optional, graph.dependents)
        let schedule = Schedule(
            run: runCount, kind: kind, timeLimit: timeLimit(of: kind), width: options.maximumConcurrentActivations,
            positions: positions, size: graph.nodes.count,
            waitsOn: { index, visit in
                if kind == .deactivation {
                    for dependent in dependents[index] { visit(dependent) }
                } else {
                    for dependency in required[index] { visit(dependency) }
                    for dependency in optional[index] { visit(dependency) }
                }
            })
        schedule.parent = ServiceContext.current
        self.schedule = schedule
        await withCheckedContinuation { continuation in
            schedule.completion = continuation
            advance(schedule)
        }
        self.schedule = nil
    }

    /// Workers of run `run` handed in outcomes: finishes each, and starts what they readied.
    func jobsFinished(run: Int) {
        guard let schedule, schedule.run == run else { return }
        for (index, outcome) in schedule.pool.takeOutcomes() {
            finish(index, outcome, schedule.kind)
            schedule.done(index)
        }
        advance(schedule)
    }

    /// The earliest deadline of run `run` passed: times out every job past its deadline.
    func deadlinePassed(run: Int) {
        guard let schedule, schedule.run == run else { return }
        let (overdue, next) = schedule.pool.abandonOverdue(now: clock.now())
        for (index, task) in overdue {
            task?.cancel()
            finish(index, Outcome(result: .timedOut, duration: schedule.pool.timeLimit), schedule.kind)
            schedule.done(index)
        }
        if let next { schedule.pool.setTimer(Self.wake(self, clock: clock, run: run, at: next)) }
        // Outcomes handed in meanwhile are read too, so that the run can end.
        jobsFinished(run: run)
    }

    /// Starts every ready job and the workers they need, and ends the run when nothing remains.
    private func advance(_ schedule: Schedule) {
        var jobs: [JobPool.Job] = []
        while let index = schedule.nextReady() {
            guard let job = start(index, schedule.kind) else {
                schedule.done(index)
                continue
            }
            let span = startJobSpan(index, schedule.kind, parent: schedule.parent)
            if let span { schedule.spans[index] = span }
            jobs.append(JobPool.Job(index: index, work: job, context: span?.context))
        }
        for worker in schedule.pool.add(jobs) {
            schedule.pool.setTask(
                Self.work(schedule.pool, worker: worker, kernel: self, clock: clock, run: schedule.run), of: worker)
        }
        if schedule.remaining == 0 {
            schedule.pool.close()
            schedule.completion?.resume()
            schedule.completion = nil
        }
    }

    private func timeLimit(of kind: Schedule.Kind) -> Duration {
        switch kind {
        case .activation: options.activationTimeLimit
        case .deactivation: options.deactivationTimeLimit
        case .phase, .event: options.participantTimeLimit
        }
    }

    private func start(_ index: Int, _ kind: Schedule.Kind) -> ModuleJob? {
        switch kind {
        case .activation: startActivation(index)
        case .deactivation: startDeactivation(index)
        case .phase(let phase): startParticipants(index, phase)
        case .event(let event): startListeners(index, event)
        }
    }

    private func finish(_ index: Int, _ outcome: Outcome, _ kind: Schedule.Kind) {
        endJobSpan(
            schedule?.spans.isEmpty == false ? schedule?.spans.removeValue(forKey: index) : nil, index, outcome, kind)
        switch kind {
        case .activation: finishActivation(index, outcome)
        case .deactivation: finishDeactivation(index, outcome)
        case .phase(let phase): finishDispatch(index, outcome, phase: phase)
        case .event: finishDispatch(index, outcome, phase: nil)
        }
    }

    /// Starts a worker off the kernel's actor (task-local values still flow in): it runs the pool's jobs one after
    /// the other and hands in their outcomes, telling the kernel when it is the first to. A worker the kernel gave
    /// up on stops; a module its late job hands back is deactivated instead.
    private nonisolated static func work(
        _ pool: JobPool, worker: Int, kernel: Kernel, clock: KernelClock, run: Int
    ) -> Task<Void, Never> {
        Task {
            while let (job, began, armTimer) = pool.next(for: worker, now: clock.now) {
                if let armTimer { pool.setTimer(wake(kernel, clock: clock, run: run, at: armTimer)) }
                let result: Outcome.Result
                do {
                    if let context = job.context {
                        result = .finished(
                            try await ServiceContext.$current.withValue(context) { try await job.work() })
                    } else {
                        result = .finished(try await job.work())
                    }
                } catch {
                    result = .threw(error)
                }
                switch pool.finish(worker, job.index, Outcome(result: result, duration: clock.now() - began)) {
                case .taken(let tellKernel):
                    if tellKernel { await kernel.jobsFinished(run: run) }
                case .abandoned:
                    if case .finished(let late) = result, let module = late.module { await module.deactivate() }
                    return
                }
            }
        }
    }

    /// Tells the kernel at `deadline` that run `run` has a deadline to check, unless cancelled first.
    private nonisolated static func wake(_ kernel: Kernel, clock: KernelClock, run: Int, at deadline: Duration)
        -> Task<Void, Never>
    {
        Task {
            try? await clock.sleep(deadline)
            if !Task.isCancelled { await kernel.deadlinePassed(run: run) }
        }
    }
}
