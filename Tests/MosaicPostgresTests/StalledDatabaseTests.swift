import Logging
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

@testable import MosaicPostgres

/// A module that waits on standby until something starts it, and needs nothing.
struct ScoresModule: Module {
    static let manifest = Manifest(id: "com.test.scores", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) { module.activation = .onDemand }
    func activate(_ context: ActivationContext) async throws {}
}

/// The kernel's operations with every process of the database stopped (SIGSTOP, as Scripts/stalled-database.py
/// does): each storage call ends at the kernel's storage time limit, on a manual clock, and no operation waits behind
/// one. The suite's time limit only ends a test that would otherwise wait for the database for good.
@Suite(
    .serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason), .timeLimit(.minutes(2)))
struct PostgresStalledDatabaseTests {
    @Test(
        "with the database stopped, a grant and a revoke fail at the storage time limit, a module starts on demand meanwhile, and shutdown waits for neither"
    )
    func operationsWithTheDatabaseStopped() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let database = try await PostgresBackend.connect(url: url)
        let clock = ManualClock()
        var options = KernelOptions(storageTimeLimit: .seconds(5), clock: clock)
        options.externalStorage = database.storage
        let kernel = Kernel(
            modules: [WeatherModule.self, ScoresModule.self], host: HostEnvironment(version: "1.0.0"),
            entitlements: .granted(["weather"]), options: options)
        try await kernel.boot()
        #expect(await kernel.state(of: "com.test.weather") == .active)

        let paused = try server.pause()
        let revoke = Task { try await kernel.revoke("weather") }
        let grant = Task { try await kernel.grant("sports") }
        // Both calls wait for the database, each with its time limit's timer set (the stranded-handler sweep's,
        // an hour away, does not count).
        await clock.sleepers(reaching: 2, dueWithin: .seconds(5))
        #expect(try await kernel.start("com.test.scores") == .active)

        clock.advance(by: .seconds(5))
        for call in [revoke, grant] {
            let error = await #expect(throws: KernelError.self) { try await call.value }
            #expect(error?.code == .storageUnavailable, "\(String(describing: error))")
        }
        #expect(await kernel.state(of: "com.test.weather") == .active, "a revoke that failed changes nothing here")

        let lastRevoke = Task { try await kernel.revoke("weather") }
        await clock.sleepers(reaching: 1, dueWithin: .seconds(5))
        await kernel.shutdown()
        #expect(await kernel.state(of: "com.test.weather") == .deactivated)
        clock.advance(by: .seconds(5))
        await #expect(throws: KernelError.self) { try await lastRevoke.value }
        server.resume(paused)
        await database.close()
    }

    @Test("with the database stopped, close(within:) returns at its time limit, though the farewell writes wait")
    func closeWithinATimeLimit() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        // Expires only waits shorter than a second: no query's deadline (the heartbeat's 5 s, the 30 s query
        // timeout) ends a wait here, so close() alone would wait for its farewell writes for good.
        let timer: PostgresConnections.QueryTimer = { loop, timeout, expire in
            guard timeout < .seconds(1) else { return {} }
            return PostgresConnections.eventLoopTimer(loop, timeout, expire)
        }
        let database = try await PostgresBackend.connect(
            url: url, queryTimeLimit: .seconds(30), prunes: false, timer: timer, logger: Logger(label: "test"))
        let paused = try server.pause()
        await database.close(within: .milliseconds(100))
        server.resume(paused)
    }
}
