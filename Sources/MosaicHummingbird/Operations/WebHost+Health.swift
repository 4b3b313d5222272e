public import Hummingbird
internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb
internal import Synchronization

extension WebHost {
    /// `/health/live`: the process answers.
    func liveness() -> WebResponse {
        WebResponse(body: "live\n")
    }

    /// `/health/ready`: 200 once boot finished, while every required module is active, every module's health
    /// check passes within its time limit and every check of the kernel's external storage passes (it answers, its
    /// change feed is proven alive, the stored policy was read); 503 otherwise (while booting, from the moment
    /// shutdown starts).
    ///
    /// The public port says only `ready` or `not ready`: what fails, and why, is for operators, so the admin port
    /// (`detailed`) adds one line per problem naming the module or check and the reason, then every storage check
    /// with how long ago it last passed.
    func readinessResponse(detailed: Bool) async -> WebResponse {
        let (problems, checks) = await readinessProblems()
        guard detailed else {
            return problems.isEmpty
                ? WebResponse(body: "ready\n") : WebResponse(status: 503, body: "not ready\n")
        }
        let checkLines = checks.map { check in
            let since = check.sincePassed.map { age in
                let (seconds, attoseconds) = age.bounded.components
                let tenths = seconds * 10 + attoseconds / 100_000_000_000_000_000
                return "passed \(tenths / 10).\(tenths % 10) s ago"
            }
            return "\(check.passing ? "ok" : "failing"): \(check.name): \(check.detail) (\(since ?? "never passed"))\n"
        }.joined()
        let overrunning = healthChecks.overrunningCount
        let overrunLine =
            overrunning == 0 ? "" : "health checks still running after their time limit: \(overrunning)\n"
        guard problems.isEmpty else {
            return WebResponse(
                status: 503, body: "not ready\n" + problems.map { $0 + "\n" }.joined() + checkLines + overrunLine)
        }
        return WebResponse(body: "ready\n" + checkLines + overrunLine)
    }

    /// Why the host is not ready (empty when it is), and the kernel's storage checks.
    private func readinessProblems() async -> ([String], [ReadinessCheck]) {
        switch readiness.phase {
        case .starting:
            return (["the kernel is booting"], [])
        case .stopping:
            return (["shutting down"], [])
        case .ready:
            break
        }
        var problems: [String] = []
        let states = await kernel.states
        for id in operations.requiredModules.sorted(by: { $0.rawValue < $1.rawValue }) {
            switch states[id] {
            case .active?: continue
            case let state?:
                problems.append("\(id): required, but \(state.name)" + (state.reason.map { ": \($0)" } ?? ""))
            case nil:
                problems.append("\(id): required, but the kernel has no such module")
            }
        }
        problems += await failedHealthChecks()
        let checks = await kernel.readinessChecks()
        problems += checks.filter { !$0.passing }.map { "\($0.name): \($0.detail)" }
        return (problems, checks)
    }

    /// The failures of every active module's health check, one line each, in module order, from a run shared with
    /// the other probes of the last second (see ``HealthCheckRuns``).
    func failedHealthChecks() async -> [String] {
        await healthChecks.failures { [self] in await runHealthChecks() }
    }

    /// Runs every active module's health check at once; the failures, one line each, in module order. A check
    /// still running from an earlier run, past its time limit, is not started again: it fails as it is.
    private func runHealthChecks() async -> [String] {
        let checks = kernel.contributions(for: .healthChecks)
        guard !checks.isEmpty else { return [] }
        let limit = operations.healthCheckTimeLimit
        let clock = operations.clock
        let runs = healthChecks
        return await withTaskGroup(of: (Int, String?).self) { group in
            for (position, contribution) in checks.enumerated() {
                let key = HealthCheckRuns.key(contribution.module, contribution.id)
                guard !runs.isOverrunning(key) else {
                    let failure =
                        "\(contribution.module) (\(contribution.id)): health check still running after its time limit "
                        + "of \(limit) (it ignores cancellation); not started again until it ends"
                    group.addTask { (position, failure) }
                    continue
                }
                group.addTask { (position, await Self.run(contribution, limit: limit, clock: clock, runs: runs)) }
            }
            var failures: [(Int, String)] = []
            for await (position, failure) in group {
                if let failure { failures.append((position, failure)) }
            }
            return failures.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Runs one check as a call of its module; the failure, or `nil` when it passed. A check that has not finished
    /// at the time limit fails and is cancelled, and the answer does not wait for it.
    static func run(
        _ contribution: Contribution<HealthCheck>, limit: Duration, clock: any Clock<Duration>,
        runs: HealthCheckRuns
    ) async -> String? {
        let name = "\(contribution.module) (\(contribution.id))"
        let key = HealthCheckRuns.key(contribution.module, contribution.id)
        let first = FirstResult()
        return await withCheckedContinuation { continuation in
            first.set(continuation)
            let timer = Task {
                try? await Self.sleep(clock, limit)
                guard !Task.isCancelled else { return }
                if first.resume("\(name): health check did not finish within \(limit)") {
                    // Counted until it ends: a check that ignores its cancellation is not started again meanwhile.
                    first.overrun { runs.overran(key) }
                    first.cancelCheck()
                }
            }
            first.setCheck(
                Task {
                    do {
                        let healthCheck = try await contribution.content()
                        try await contribution.call { try await healthCheck.check() }
                        first.resume(nil)
                    } catch {
                        first.resume("\(name): health check failed: \(String(describing: error).prefix(500))")
                    }
                    timer.cancel()
                    first.endCheck { runs.ended(key) }
                })
        }
    }

    private static func sleep<C: Clock<Duration>>(_ clock: C, _ duration: Duration) async throws {
        try await clock.sleep(for: duration.bounded)
    }
}

/// The first of several racing answers (a check's, or its time limit's); the rest are ignored.
private final class FirstResult: Sendable {
    private struct State {
        var continuation: CheckedContinuation<String?, Never>?
        var done = false
        var check: Task<Void, Never>?
        var cancelled = false
        var checkEnded = false
        var overran = false
    }

    private let state = Locked(State())

    func set(_ continuation: CheckedContinuation<String?, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Keeps the check's task, to cancel it should the time limit win (at once, if it has).
    func setCheck(_ task: Task<Void, Never>) {
        let cancel = state.withLock { state in
            state.check = task
            return state.cancelled
        }
        if cancel { task.cancel() }
    }

    /// The check outlived its time limit: `mark` counts it, unless it has ended already. Under the same lock as
    /// ``endCheck(_:)``, so that a check's end is never counted before its overrun.
    func overrun(_ mark: () -> Void) {
        state.withLock { state in
            guard !state.checkEnded else { return }
            state.overran = true
            mark()
        }
    }

    /// The check's task ended: `unmark` takes back its overrun, if it was counted.
    func endCheck(_ unmark: () -> Void) {
        state.withLock { state in
            state.checkEnded = true
            if state.overran { unmark() }
        }
    }

    /// Cancels the check's task, now or once it is known.
    func cancelCheck() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.check
        }
        task?.cancel()
    }

    /// Answers with `value` unless answered already; whether this was the answer.
    @discardableResult
    func resume(_ value: String?) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<String?, Never>? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
        return continuation != nil
    }
}

extension WebHost {
    /// `/health/live`, `/health/ready` and (when the host hands its metrics text) `/metrics`. What is for
    /// operators only is served on the admin port: `/health/ready`'s reasons (`detailed`) and `/metrics`.
    func addOperationsRoutes(to router: DefendedRoutes, detailed: Bool, metrics serveMetrics: Bool) {
        // Module middleware does not wrap these: a module's fault must not make the host look dead.
        router.get("/health/live") { _, _ in Self.hummingbird(liveness()) }
        router.get("/health/ready") { _, _ in Self.hummingbird(await readinessResponse(detailed: detailed)) }
        if serveMetrics, let metrics = operations.metrics {
            router.get("/metrics") { _, _ in
                Self.hummingbird(WebResponse(contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics()))
            }
        }
    }

    /// The router of the admin port, behind the same defences: the operations routes, and the control plane
    /// (`/`, a page with the entitlements' grant and revoke forms and the undelivered events' resubmit forms, and
    /// the posts they send), which runs no module code. `exposure` decides who may change the app, as for
    /// ``router(servedOn:)``: ``WebServer`` passes what the admin address is (loopback by default).
    public func adminRouter(servedOn exposure: Exposure = .network) -> Router<WebRequestContext> {
        let router = DefendedRoutes(host: self)
        addOperationsRoutes(to: router, detailed: true, metrics: true)
        router.get("/") { _, _ in Self.hummingbird(await operatorPage()) }
        addControlPlane(to: router, servedOn: exposure, on: .adminPort) { _, _, change in
            Self.hummingbird(await change())
        }
        return router.finished()
    }
}
