import Mosaic
import MosaicKernel
import Testing

@testable import MosaicPostgres

/// A module whose activation says it started and then waits until the test lets it finish: an instance's boot held
/// while its modules come up. It comes after Weather (an optional requirement orders activation), so Weather is active
/// by the time it starts; independent modules may activate at once.
struct SlowStartModule: Module {
    static let manifest = Manifest(
        id: "com.test.slow-start", version: "1.0.0", requires: [.module("com.test.weather", optional: true)])
    static let started = AsyncStream.makeStream(of: Void.self)
    static let finish = AsyncStream.makeStream(of: Void.self)

    func activate(_ context: ActivationContext) async throws {
        Self.started.continuation.yield()
        for await _ in Self.finish.stream { return }
    }
}

/// An instance that boots while another changes the policy. The suite's time limit only ends a test that would
/// otherwise wait for good for a change that never arrives; nothing here is timed.
@Suite(
    .serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason), .timeLimit(.minutes(2)))
struct PostgresBootingInstanceTests {
    @Test(
        "a revoke made while another instance boots is enforced there once its modules are up, and that instance is not ready until it is"
    )
    func revokeWhileAnotherBoots() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let a = try await Instance.boot(url)
        let database = try await PostgresBackend.connect(url: url, heartbeat: .milliseconds(200))
        var options = KernelOptions()
        options.externalStorage = database.storage
        let b = Kernel(
            modules: [WeatherModule.self, SlowStartModule.self], host: HostEnvironment(version: "1.0.0"),
            entitlements: .granted(["weather"]), options: options)
        let boot = Task { try await b.boot() }
        for await _ in SlowStartModule.started.stream { break }
        #expect(await b.state(of: "com.test.weather") == .active)

        try await a.kernel.revoke("weather")
        // Each heartbeat wakes the test to look: b hears of the revoke while its boot still runs.
        var pending: ReadinessCheck?
        for await _ in database.listener.events.stream {
            pending = await b.readinessChecks().first { $0.name == "stored policy" && !$0.passing }
            if pending != nil { break }
        }
        #expect(pending?.detail.contains("not enforced yet") == true, "\(String(describing: pending))")
        #expect(await b.state(of: "com.test.weather") == .active, "the boot still runs")

        SlowStartModule.finish.continuation.yield()
        _ = try await boot.value
        var ready = false
        for await _ in database.listener.events.stream {
            ready = await b.readinessChecks().allSatisfy(\.passing)
            if ready { break }
        }
        #expect(ready)
        #expect(await b.state(of: "com.test.weather") != .active)
        #expect(await b.grantedEntitlements.contains("weather") == false)
        await b.shutdown()
        await database.close()
        await a.stop()
    }
}
