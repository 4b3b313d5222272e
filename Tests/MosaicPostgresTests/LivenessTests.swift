import Foundation
import Mosaic
import MosaicKernel
import Testing

@testable import MosaicPostgres

#if canImport(Glibc)
    import Glibc
#endif

/// A connection that goes silent without closing (its server process stopped) is noticed by the heartbeat and
/// replaced, and the readiness checks say how storage stands. Each test's time limit only ends a test that would
/// otherwise wait forever for a change that never arrives; nothing here is timed.
@Suite(
    .serialized, TestServer.scope, .enabled(if: TestServer.shouldRun, TestServer.skipReason), .timeLimit(.minutes(2)))
struct PostgresLivenessTests {
    @Test("a listening connection gone silent is replaced, and the revoke another instance made meanwhile applies")
    func silentListener() async throws {
        let url = try await TestServer.running().makeDatabase()
        let a = try await Instance.boot(url)
        let b = try await Instance.boot(url, heartbeat: .milliseconds(200))
        let backend = try #require(b.database.listener.backend)
        let changes = b.kernel.stateChanges()
        kill(backend, SIGSTOP)
        do {
            try await a.kernel.revoke("weather")
        } catch {
            kill(backend, SIGCONT)
            throw error
        }
        let stopped = await first(changes) { $0.id == "com.test.weather" && $0.to != .active }
        kill(backend, SIGCONT)
        #expect(stopped != nil)
        #expect(await b.kernel.grantedEntitlements.contains("weather") == false)
        #expect(b.database.listener.backend != backend)
        for instance in [a, b] { await instance.stop() }
    }

    @Test("while the database does not answer, the storage check fails; once it answers, every check passes")
    func readinessFollowsTheDatabase() async throws {
        let server = try TestServer.running()
        let url = try await server.makeDatabase()
        let b = try await Instance.boot(url, heartbeat: .milliseconds(200))
        let checks = await b.kernel.readinessChecks()
        #expect(checks.map(\.name) == ["shared storage", "change feed", "shared policy"])
        #expect(checks.allSatisfy { $0.passing }, "\(checks)")

        var events = b.database.listener.events.stream.makeAsyncIterator()
        let paused = try server.pause()
        var during: [ReadinessCheck] = []
        while let event = await events.next() {
            guard event == .probed(answered: false) else { continue }
            during = await b.kernel.readinessChecks()
            break
        }
        server.resume(paused)
        let storage = during.first { $0.name == "shared storage" }
        #expect(storage?.passing == false)
        #expect(storage?.detail.contains("Check that the server runs and is reachable") == true)

        var after: [ReadinessCheck] = []
        while let event = await events.next() {
            guard event == .probed(answered: true) else { continue }
            after = await b.kernel.readinessChecks()
            if after.allSatisfy(\.passing) { break }
        }
        #expect(!after.isEmpty && after.allSatisfy { $0.passing }, "\(after)")
        await b.stop()
    }
}
