import Hummingbird
import HummingbirdTesting
import Logging
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import ServiceLifecycle
import Synchronization
import Testing

/// A module whose activation and deactivation each wait at a gate, announcing that they have started.
struct SlowLifeModule: Module {
    static let manifest = Manifest(id: "com.test.slow-life", version: "1.0.0")
    static let (activating, enterActivation) = AsyncStream.makeStream(of: Void.self)
    static let (activationGate, openActivation) = AsyncStream.makeStream(of: Void.self)
    static let (deactivating, enterDeactivation) = AsyncStream.makeStream(of: Void.self)
    static let (deactivationGate, openDeactivation) = AsyncStream.makeStream(of: Void.self)

    func activate(_ context: ActivationContext) async throws {
        Self.enterActivation.yield()
        for await _ in Self.activationGate { break }
    }

    func deactivate() async {
        Self.enterDeactivation.yield()
        for await _ in Self.deactivationGate { break }
    }
}

/// A module whose health check fails.
struct SickModule: Module {
    static let manifest = Manifest(id: "com.test.sick", version: "1.0.0")
    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "the database is unreachable" }
    }

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .healthChecks, id: "database", title: "Database") {
            HealthCheck { throw Unreachable() }
        }
    }
}

/// A module whose health check never returns.
struct HangingCheckModule: Module {
    static let manifest = Manifest(id: "com.test.hanging-check", version: "1.0.0")

    /// A stream nothing is ever sent on: the check waits on it until cancelled.
    static let (never, keepOpen) = AsyncStream.makeStream(of: Void.self)

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .healthChecks, id: "queue", title: "Queue") {
            HealthCheck { for await _ in never {} }
        }
    }
}

/// A module whose health check passes.
struct HealthyModule: Module {
    static let manifest = Manifest(id: "com.test.healthy", version: "1.0.0")

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .healthChecks, id: "ok", title: "OK") { HealthCheck {} }
    }
}

/// A module whose health check counts its runs and passes.
struct CountedCheckModule: Module {
    static let manifest = Manifest(id: "com.test.counted-check", version: "1.0.0")
    static let runs = Locked(0)

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .healthChecks, id: "counted", title: "Counted") {
            HealthCheck { runs.withLock { $0 += 1 } }
        }
    }
}

/// A module whose health check counts its runs and waits at a gate, ignoring cancellation.
struct StubbornCheckModule: Module {
    static let manifest = Manifest(id: "com.test.stubborn-check", version: "1.0.0")
    static let runs = Locked(0)
    static let gate = Gate()

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .healthChecks, id: "disk", title: "Disk") {
            HealthCheck {
                runs.withLock { $0 += 1 }
                await gate.wait()
            }
        }
    }
}

/// A web host over `modules`, booted by a harness, with the given operations options.
private func healthWeb(
    _ modules: [any Module.Type], operations: OperationsOptions
) async throws -> (TestApp, WebHost) {
    var harness = TestHarness(modules: modules)
    harness.extensionPoints = WebHost.extensionPoints
    let app = try await harness.start()
    let web = WebHost(
        kernel: app.kernel, catalog: ModuleCatalog(modules: modules), scheme: "ghost", title: "Health",
        logger: Logger(label: "test.web") { _ in SwiftLogNoOpLogHandler() }, operations: operations)
    web.readiness.markReady()
    return (app, web)
}

@Suite("Health")
struct HealthTests {
    @Test("/health/ready is 503 while booting, 200 once booted, and 503 from the moment shutdown starts")
    func readinessThroughLife() async throws {
        let quiet = Logger(label: "test.server") { _ in SwiftLogNoOpLogHandler() }
        let kernel = Kernel(
            modules: [SlowLifeModule.self], host: HostEnvironment(version: "1.0.0"),
            extensionPoints: WebHost.extensionPoints, logger: quiet)
        let web = WebHost(
            kernel: kernel, catalog: ModuleCatalog(modules: [SlowLifeModule.self]), scheme: "ghost", title: "Health",
            logger: quiet, operations: OperationsOptions(requiredModules: ["com.test.slow-life"]))
        let (adminPorts, announceAdmin) = AsyncStream.makeStream(of: Int.self)
        let (boots, announceBoot) = AsyncStream.makeStream(of: BootReport.self)
        let group = WebServer.serviceGroup(
            web, port: 0, admin: AdminAddress(port: 0), logger: quiet, signals: [],
            onBooted: { announceBoot.yield($0) }, onAdminRunning: { announceAdmin.yield($0) })
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var ports = adminPorts.makeAsyncIterator()
            let admin = try #require(await ports.next())
            for await _ in SlowLifeModule.activating { break }

            let booting = try await RawHTTP.get(port: admin, "/health/ready")
            #expect(booting.hasPrefix("HTTP/1.1 503"))
            #expect(booting.contains("booting"))
            #expect(try await RawHTTP.get(port: admin, "/health/live").hasPrefix("HTTP/1.1 200"))

            SlowLifeModule.openActivation.yield()
            for await _ in boots { break }
            let ready = try await RawHTTP.get(port: admin, "/health/ready")
            #expect(ready.hasPrefix("HTTP/1.1 200"))

            await group.triggerGracefulShutdown()
            for await _ in SlowLifeModule.deactivating { break }
            // The module is still deactivating: the admin server answers, and says not ready.
            #expect(await kernel.state(of: "com.test.slow-life") == .active)
            let stopping = try await RawHTTP.get(port: admin, "/health/ready")
            #expect(stopping.hasPrefix("HTTP/1.1 503"))
            #expect(stopping.contains("shutting down"))
            SlowLifeModule.openDeactivation.yield()
            try await tasks.waitForAll()
        }
        #expect(await kernel.state(of: "com.test.slow-life") == .deactivated)
    }

    @Test("a failing health check: 503, naming module, check and reason on the admin port, only 'not ready' publicly")
    func failingCheck() async throws {
        let (app, web) = try await healthWeb([SickModule.self, HealthyModule.self], operations: .init())
        try await Application(router: web.adminRouter()).test(.router) { client in
            let ready = try await client.get("/health/ready")
            #expect(ready.status == 503)
            #expect(ready.body.contains("com.test.sick (database): health check failed: the database is unreachable"))
            #expect(!ready.body.contains("com.test.healthy"))
            #expect(try await client.get("/health/live").status == 200)
        }
        try await Application(router: web.router()).test(.router) { client in
            let ready = try await client.get("/health/ready")
            #expect(ready.status == 503)
            #expect(ready.body == "not ready\n")
        }
        await app.shutdown()
    }

    @Test("a health check that does not finish within the time limit makes /health/ready 503, naming the module")
    func hangingCheck() async throws {
        let clock = ManualClock()
        let (app, web) = try await healthWeb(
            [HangingCheckModule.self], operations: OperationsOptions(healthCheckTimeLimit: .seconds(2), clock: clock))
        try await Application(router: web.adminRouter()).test(.router) { client in
            async let answer = client.get("/health/ready")
            await clock.sleepers(reaching: 1)
            clock.advance(by: .seconds(2))
            let ready = try await answer
            #expect(ready.status == 503)
            #expect(
                ready.body.contains("com.test.hanging-check (queue): health check did not finish within 2.0 seconds"))
        }
        await app.shutdown()
    }

    @Test("probes within a second share one run of the health checks; a probe a second later runs them again")
    func sharedRuns() async throws {
        let clock = ManualClock()
        let (app, web) = try await healthWeb([CountedCheckModule.self], operations: OperationsOptions(clock: clock))
        try await Application(router: web.router()).test(.router) { client in
            for _ in 0..<5 {
                let ready = try await client.get("/health/ready")
                #expect(ready.status == 200)
            }
            #expect(CountedCheckModule.runs.withLock { $0 } == 1)
            clock.advance(by: .seconds(1))
            let later = try await client.get("/health/ready")
            #expect(later.status == 200)
            #expect(CountedCheckModule.runs.withLock { $0 } == 2)
        }
        await app.shutdown()
    }

    @Test("a check that ignores cancellation is counted while it runs past its limit, and never started twice")
    func overrunningCheck() async throws {
        let clock = ManualClock()
        let (app, web) = try await healthWeb(
            [StubbornCheckModule.self],
            operations: OperationsOptions(healthCheckTimeLimit: .seconds(2), clock: clock))
        try await Application(router: web.adminRouter()).test(.router) { client in
            async let answer = client.get("/health/ready")
            await clock.sleepers(reaching: 1)
            clock.advance(by: .seconds(2))
            let first = try await answer
            #expect(first.status == 503)
            #expect(
                first.body.contains("com.test.stubborn-check (disk): health check did not finish within 2.0 seconds"))

            clock.advance(by: .seconds(1))
            let second = try await client.get("/health/ready")
            #expect(second.status == 503)
            #expect(
                second.body.contains("com.test.stubborn-check (disk): health check still running after its time limit"))
            #expect(second.body.contains("health checks still running after their time limit: 1"))
            #expect(StubbornCheckModule.runs.withLock { $0 } == 1)

            // Once it ends, the next run starts it again (and this time it passes at once).
            StubbornCheckModule.gate.open()
            var status = second.status
            while status != 200 {
                clock.advance(by: .seconds(1))
                status = try await client.get("/health/ready").status
            }
            #expect(StubbornCheckModule.runs.withLock { $0 } == 2)
        }
        await app.shutdown()
    }

    @Test("a required module that is not active makes /health/ready 503 with its state and reason")
    func requiredModule() async throws {
        let (app, web) = try await healthWeb(
            [HealthyModule.self], operations: OperationsOptions(requiredModules: ["com.test.healthy", "com.test.gone"]))
        try await Application(router: web.adminRouter()).test(.router) { client in
            let ready = try await client.get("/health/ready")
            #expect(ready.status == 503)
            #expect(ready.body.contains("com.test.gone: required, but the kernel has no such module"))
            #expect(!ready.body.contains("com.test.healthy"))
        }
        await app.shutdown()
    }

    @Test("/health/ready is 200 when every required module is active and every check passes")
    func healthy() async throws {
        let (app, web) = try await healthWeb(
            [HealthyModule.self], operations: OperationsOptions(requiredModules: ["com.test.healthy"]))
        try await Application(router: web.router()).test(.router) { client in
            let ready = try await client.get("/health/ready")
            #expect(ready.status == 200)
        }
        await app.shutdown()
    }
}
