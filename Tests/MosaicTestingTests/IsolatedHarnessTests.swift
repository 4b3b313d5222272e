import Foundation
import IsolationFixtures
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

@Suite(
    "TestHarness, a module isolated",
    .disabled(if: IsolationFixtures.underThreadSanitizer, Comment(rawValue: IsolationFixtures.sanitizerReason)))
struct IsolatedHarnessTests {
    @Test("a harness runs a module in a process of its own, as a host that isolates it would, and sees its crash")
    func isolated() async throws {
        let server = try #require(IsolationFixtures.server(), "state-writer is built with the tests")
        let fixtures = IsolationFixtures.catalog.entries.map(\.factory)
        var harness = TestHarness(
            factories: fixtures.filter {
                [IsolationFixtures.echo, IsolationFixtures.trapsInContent].contains($0.manifest.id)
            })
        harness.isolate(IsolationFixtures.trapsInContent, executable: server)
        try await harness.run { app in
            let echo = try #require(app.contributions(for: .dashboardWidgets).first { $0.id == "process" })
            let text = try await echo.content().blocks.first.flatMap { block -> String? in
                if case .text(let text) = block { text } else { nil }
            }
            #expect(text?.hasPrefix("served by process ") == true && text != "served by process \(getpid())")
            let changes = app.kernel.stateChanges()
            let trap = try #require(app.contributions(for: .dashboardWidgets).first { $0.id == "trap" })
            await #expect(throws: ModuleUnavailableError.self) { try await trap.content() }
            for await change in changes
            where change.id == IsolationFixtures.trapsInContent && change.to.name == "failed" {
                break
            }
            await app.expect(IsolationFixtures.trapsInContent, .failed)
            await app.expect(IsolationFixtures.echo, .active)
        }
    }
}
