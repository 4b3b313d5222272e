import Foundation
import GRDB
import Mosaic
import MosaicKernel
import Synchronization
import Testing

/// What a module's code or a damaged file does never stops the process: each of these trapped before.
@Suite(.timeLimit(.minutes(1))) struct NoTrapTests {
    @Test("a factory that resolves its own service while it builds fails with a cycle error, naming the fix")
    func factoryResolvingItself() async throws {
        let kernel = makeKernel([
            serviceModule(
                "com.app.weather",
                onActivate: { context in
                    let error = #expect(throws: ServiceError.self) { try context.services.resolve(.forecast) }
                    #expect(error?.code == .cycle, "\(String(describing: error))")
                    #expect(error?.message.contains("factory parameter") == true)
                }
            ) { module in
                module.services.singleton(.forecast) { () throws -> any Forecast in
                    // Undeclared in the factory's parameters, so validation cannot see it: found when it runs.
                    @Injected(.forecast) var itself
                    return try itself()
                }
            }
        ])
        let report = try await kernel.boot()
        #expect(report["com.app.weather"]?.state.isActive == true)
        await kernel.shutdown()
    }

    @Test("time limits meant as never (.seconds(Int64.max)) are waited on, not overflowed")
    func endlessTimeLimits() async throws {
        var options = KernelOptions(
            activationTimeLimit: .seconds(Int64.max), deactivationTimeLimit: .seconds(Int64.max),
            participantTimeLimit: .seconds(Int64.max), pendingDeeplinkTimeLimit: .seconds(Int64.max),
            storageTimeLimit: .seconds(Int64.max))
        options.durableEvents = DurableEventOptions(
            handlerTimeLimit: .seconds(Int64.max), pollInterval: .seconds(Int64.max))
        let contexts = Contexts()
        let kernel = makeKernel([eventModule("com.app.shop", contexts: contexts)], options: options)
        let report = try await kernel.boot()
        #expect(report["com.app.shop"]?.state.isActive == true)
        let shop = try #require(contexts["com.app.shop"])
        try await shop.state.set(.counter, to: 1)
        try await shop.events.handle(OrderPlaced.self, as: "never-late") { _ in }
        try await shop.events.publish(OrderPlaced(order: 1))
        #expect(report.table.contains("com.app.shop"))
        await kernel.shutdown()
    }

    @Test("a state row edited by hand into a value of another kind is parked with a diagnostic")
    func rowOfAnotherKind() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await first.boot()
        try await first.sharedState.set(.storedPreferences, to: Preferences(city: "Oslo", units: "metric"))
        await first.shutdown()
        try await offThePool {
            try DatabaseQueue(path: directory + "/state.sqlite").write { db in
                try db.execute(sql: "UPDATE mosaic_state SET value = 42, version = 'two'")
            }
        }
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await kernel.boot()
        await kernel.sharedState.load(.storedPreferences)
        #expect(kernel.sharedState[.storedPreferences].city == "Chicago", "the initial value")
        let problem = try #require(await kernel.diagnostics.first { $0.code == .statePersistence })
        #expect(problem.message.contains("mosaic_state_unreadable"), "\(problem.message)")
        await kernel.shutdown()
    }
}
