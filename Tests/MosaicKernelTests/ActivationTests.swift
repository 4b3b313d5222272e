import Logging
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

@Suite struct ActivationTests {
    @Test("modules activate after their dependencies and all become active")
    func dependencyOrder() async throws {
        let log = EventLog()
        let kernel = makeKernel([
            probe(
                "com.app.dashboard", requires: [.module("com.app.weather"), .module("com.app.art", optional: true)],
                log: log),
            probe("com.app.weather", requires: [.module("com.app.location")], log: log),
            probe("com.app.art", log: log),
            probe("com.app.location", log: log),
        ])
        let report = try await kernel.boot()
        #expect(report.count("active") == 4)
        for (dependency, dependent) in [
            ("com.app.location", "com.app.weather"), ("com.app.weather", "com.app.dashboard"),
            ("com.app.art", "com.app.dashboard"),
        ] {
            let finished = try #require(log.position(of: .activated(ModuleID(dependency))))
            let started = try #require(log.position(of: .activationStarted(ModuleID(dependent))))
            #expect(finished < started, "\(dependency) must finish before \(dependent) starts")
        }
        await kernel.shutdown()
    }

    @Test("a throwing module is failed, its required dependents blocked, optional dependents and siblings active")
    func throwingModule() async throws {
        let kernel = makeKernel([
            probe("com.app.database", behavior: .fail),
            probe("com.app.store", requires: [.module("com.app.database")]),
            probe("com.app.checkout", requires: [.module("com.app.store")]),
            probe("com.app.reports", requires: [.module("com.app.database", optional: true)]),
            probe("com.app.sibling"),
        ])
        let report = try await kernel.boot()
        #expect(report["com.app.database"]?.state == .failed(reason: "activate(_:) threw: the database is unreachable"))
        #expect(report["com.app.sibling"]?.state == .active)
        #expect(report["com.app.reports"]?.state == .active)
        guard case .blocked(let blockers, let reason)? = report["com.app.store"]?.state else {
            Issue.record("store should be blocked")
            return
        }
        #expect(blockers == [.module("com.app.database")])
        #expect(reason.contains("it requires com.app.database, which failed."))
        guard case .blocked(let checkoutBlockers, let checkoutReason)? = report["com.app.checkout"]?.state else {
            Issue.record("checkout should be blocked")
            return
        }
        #expect(checkoutBlockers == [.module("com.app.store")])
        #expect(
            checkoutReason.contains("Cause: com.app.database failed: activate(_:) threw: the database is unreachable"))
        let failure = try #require(report.diagnostics.with(.activationFailed).first)
        #expect(failure.modules == ["com.app.database"])
        #expect(failure.severity == .error)
        await kernel.shutdown()
    }

    @Test("a hanging module is failed after the time limit while the rest boots", .timeLimit(.minutes(1)))
    func hangingModule() async throws {
        let gate = Gate()
        let log = EventLog()
        let clock = ManualClock()
        let kernel = makeKernel(
            [
                probe("com.app.stuck", behavior: .hang(gate), log: log),
                probe("com.app.waits", requires: [.module("com.app.stuck")]),
                probe("com.app.fine-one"), probe("com.app.fine-two"),
            ], options: KernelOptions(activationTimeLimit: .seconds(10), clock: clock))
        let boot = Task { try await kernel.boot() }
        await clock.sleepers(reaching: 1)
        // One timer covers every activation under way: both fine modules must be done, or the limit fails them too.
        for id: ModuleID in ["com.app.fine-one", "com.app.fine-two"] {
            while await kernel.state(of: id) != .active { await Task.yield() }
        }
        #expect(await kernel.state(of: "com.app.stuck") == .authorized, "nothing times out before the limit")
        clock.advance(by: .seconds(10))
        let report = try await boot.value
        #expect(report["com.app.stuck"]?.state.name == "failed")
        #expect(report["com.app.stuck"]?.state.reason?.contains("did not finish within") == true)
        #expect(report["com.app.waits"]?.state.name == "blocked")
        #expect(report["com.app.fine-one"]?.state == .active)
        #expect(report["com.app.fine-two"]?.state == .active)
        #expect(report.diagnostics.with(.activationTimedOut).count == 1)

        gate.open()
        await kernel.shutdown()
    }

    @Test(
        "with one module at a time, the modules waiting behind a hanging one activate once it times out",
        .timeLimit(.minutes(1)))
    func hangingModuleAtWidthOne() async throws {
        let gate = Gate()
        let clock = ManualClock()
        let kernel = makeKernel(
            [probe("com.app.stuck", behavior: .hang(gate)), probe("com.app.fine-one"), probe("com.app.fine-two")],
            options: KernelOptions(activationTimeLimit: .seconds(10), maximumConcurrentActivations: 1, clock: clock))
        let boot = Task { try await kernel.boot() }
        await clock.sleepers(reaching: 1)
        #expect(await kernel.state(of: "com.app.fine-one") == .authorized, "one module at a time: it waits")
        clock.advance(by: .seconds(10))
        let report = try await boot.value
        #expect(report["com.app.stuck"]?.state.name == "failed")
        #expect(report["com.app.fine-one"]?.state == .active)
        #expect(report["com.app.fine-two"]?.state == .active)
        gate.open()
        await kernel.shutdown()
    }

    @Test("a module whose activation returns after the time limit is deactivated, not leaked", .timeLimit(.minutes(1)))
    func lateActivation() async throws {
        let gate = Gate()
        let clock = ManualClock()
        let (deactivations, deactivated) = AsyncStream.makeStream(of: Void.self)
        let kernel = makeKernel(
            [
                ModuleFactory(manifest: Manifest(id: "com.app.late", version: "1.0.0")) {
                    Probe(activate: { _ in await gate.wait() }, deactivate: { deactivated.yield() })
                }
            ], options: KernelOptions(activationTimeLimit: .seconds(10), clock: clock))
        let boot = Task { try await kernel.boot() }
        await clock.sleepers(reaching: 1)
        clock.advance(by: .seconds(10))
        let report = try await boot.value
        #expect(report["com.app.late"]?.state.name == "failed")
        gate.open()
        var iterator = deactivations.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        #expect(await kernel.state(of: "com.app.late")?.name == "failed")
        await kernel.shutdown()
    }

    @Test(
        "no more modules activate at once than the configured width, and independent ones do overlap",
        .timeLimit(.minutes(1)))
    func concurrencyWidth() async throws {
        let tracker = ConcurrencyTracker()
        let factories = (0..<12).map { index in
            ModuleFactory(manifest: Manifest(id: ModuleID("com.wide.m\(index)"), version: "1.0.0")) {
                Probe(activate: { _ in await tracker.enter() }, deactivate: {})
            }
        }
        let kernel = Kernel(
            catalog: catalog(factories), host: testHost,
            options: KernelOptions(maximumConcurrentActivations: 3), logger: quietLogger)
        let boot = Task { try await kernel.boot() }
        await tracker.waitUntil(inside: 3)
        await tracker.releaseAll(expecting: 12)
        let report = try await boot.value
        #expect(report.count("active") == 12)
        #expect(tracker.maximum == 3)
        await kernel.shutdown()
    }

    @Test("shutdown deactivates in reverse dependency order and ends state streams")
    func shutdownOrder() async throws {
        let log = EventLog()
        let kernel = makeKernel([
            probe("com.app.location", log: log),
            probe("com.app.weather", requires: [.module("com.app.location")], log: log),
            probe("com.app.dashboard", requires: [.module("com.app.weather")], log: log),
        ])
        try await kernel.boot()
        let changes = kernel.stateChanges()
        await kernel.shutdown()
        #expect(log.deactivations == ["com.app.dashboard", "com.app.weather", "com.app.location"])
        var seen: [StateChange] = []
        for await change in changes { seen.append(change) }
        #expect(seen.map(\.to) == [.deactivated, .deactivated, .deactivated])
        #expect(await kernel.states.values.allSatisfy { $0 == .deactivated })
        await kernel.shutdown()
        #expect(log.deactivations.count == 3)
    }

    @Test("booting twice, or after shutdown, is refused with a reason")
    func bootMisuse() async throws {
        let kernel = makeKernel([probe("com.app.one")])
        try await kernel.boot()
        await #expect(throws: KernelError.self) { try await kernel.boot() }
        await kernel.shutdown()
        let error = await #expect(throws: KernelError.self) { try await kernel.grant("x") }
        #expect(error?.code == .shutDown)
    }

    @Test("each module's context carries its identity and a logger labelled with its id")
    func activationContext() async throws {
        let seen = ContextRecorder()
        let manifest = Manifest(id: "com.app.ctx", version: "3.1.4")
        let kernel = makeKernel([
            ModuleFactory(manifest: manifest) {
                Probe(activate: { context in seen.record(context) }, deactivate: {})
            }
        ])
        try await kernel.boot()
        let context = try #require(seen.context)
        #expect(context.id == "com.app.ctx")
        #expect(context.version == "3.1.4")
        #expect(context.logger.label == "com.app.ctx")
        #expect(context.host == testHost)
        await kernel.shutdown()
    }

    @Test("every module moves discovered → validated → authorized → active, observably")
    func observedLifecycle() async throws {
        let kernel = makeKernel([probe("com.app.one"), probe("com.app.two", entitlements: ["pro"])])
        let changes = kernel.stateChanges()
        try await kernel.boot()
        await kernel.shutdown()
        var byModule: [ModuleID: [String]] = [:]
        for await change in changes { byModule[change.id, default: []].append(change.to.name) }
        #expect(byModule["com.app.one"] == ["validated", "authorized", "active", "deactivated"])
        #expect(byModule["com.app.two"] == ["validated", "blocked"])
    }
}
