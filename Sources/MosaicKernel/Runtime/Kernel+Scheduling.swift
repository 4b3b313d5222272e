internal import Mosaic
internal import Tracing

extension Kernel {
    /// Runs the activation, deactivation, phase participants or event listeners of each module at `positions`,
    /// each once those it waits on are done (its dependents when deactivating, else its dependencies), at most
    /// ``KernelOptions/maximumConcurrentActivations`` at a time, each within its time limit.
    ///
    /// Each job runs in its own task and reports back to the actor directly, so a finished job readies the next
    /// without waking a coordinating task. One timer covers every job: all share one time limit, so deadlines
    /// fall in launch order and only the earliest pending one needs watching. A job that outlives its limit is
    /// cancelled and reported timed out; should it finish later and hand back a module, that module is
    /// deactivated so that nothing it acquired leaks.
    func runInDependencyOrder(_ positions: [Int], kind: Schedule.Kind) async {
        guard !positions.isEmpty else { return }
        runCount += 1
        let nodes = graph.nodes
        let schedule = Schedule(
            run: runCount, kind: kind,
            timeLimit: timeLimit(of: kind), positions: positions, size: nodes.count,
            waitsOn: { kind == .deactivation ? nodes[$0].dependents : nodes[$0].dependencies })
        schedule.parent = ServiceContext.current
        self.schedule = schedule
        await withCheckedContinuation { continuation in
            schedule.completion = continuation
            advance(schedule)
        }
        self.schedule = nil
    }

    /// A job of run `run` ended with `outcome`; returns `false` when the kernel had already given up on it.
    func jobFinished(run: Int, index: Int, _ outcome: Outcome) -> Bool {
        guard let schedule, schedule.run == run, schedule.running.removeValue(forKey: index) != nil else {
            return false
        }
        finish(index, outcome, schedule.kind)
        schedule.done(index)
        advance(schedule)
        return true
    }

    /// The earliest deadline of run `run` passed: times out every job past its deadline.
    func deadlinePassed(run: Int) {
        guard let schedule, schedule.run == run else { return }
        schedule.timer = nil
        let now = clock.now()
        while let deadline = schedule.earliestDeadline(), deadline <= now {
            let index = schedule.deadlines[schedule.deadlineHead].index
            schedule.deadlineHead += 1
            guard let task = schedule.running.removeValue(forKey: index) else { continue }
            task.cancel()
            finish(index, Outcome(result: .timedOut, duration: schedule.timeLimit), schedule.kind)
            schedule.done(index)
        }
        advance(schedule)
    }

    /// Starts ready jobs up to the width, keeps the timer on the earliest deadline, and ends the run when
    /// nothing remains.
    private func advance(_ schedule: Schedule) {
        while schedule.running.count < options.maximumConcurrentActivations, let index = schedule.nextReady() {
            let job = start(index, schedule.kind)
            guard let job else {
                schedule.done(index)
                continue
            }
            let span = startJobSpan(index, schedule.kind, parent: schedule.parent)
            schedule.spans[index] = span
            schedule.running[index] = Self.spawn(
                job, kernel: self, clock: clock, run: schedule.run, index: index, context: span.context)
            schedule.deadlines.append((index, clock.now() + schedule.timeLimit))
        }
        if schedule.timer == nil, let deadline = schedule.earliestDeadline() {
            schedule.timer = Self.wake(self, clock: clock, run: schedule.run, at: deadline)
        }
        if schedule.remaining == 0 {
            schedule.timer?.cancel()
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
        endJobSpan(schedule?.spans.removeValue(forKey: index), index, outcome, kind)
        switch kind {
        case .activation: finishActivation(index, outcome)
        case .deactivation: finishDeactivation(index, outcome)
        case .phase(let phase): finishDispatch(index, outcome, phase: phase)
        case .event: finishDispatch(index, outcome, phase: nil)
        }
    }

    /// Starts `job` off the kernel's actor (task-local values still flow in). Reports the outcome unless the
    /// kernel gave up on the job first, in which case a module it hands back is deactivated instead.
    private nonisolated static func spawn(
        _ job: @escaping ModuleJob, kernel: Kernel, clock: KernelClock, run: Int, index: Int, context: ServiceContext
    ) -> Task<Void, Never> {
        Task {
            let began = clock.now()
            let result: Outcome.Result
            do {
                result = .finished(try await ServiceContext.$current.withValue(context) { try await job() })
            } catch {
                result = .threw(error)
            }
            let outcome = Outcome(result: result, duration: clock.now() - began)
            let accepted = await kernel.jobFinished(run: run, index: index, outcome)
            if !accepted, case .finished(let module?) = result {
                await module.deactivate()
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
