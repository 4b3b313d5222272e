import Logging
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

@Suite struct RuntimeChangeTests {
    /// location ← weather (needs "weather") ← dashboard ← widgets; sports stands apart.
    private func weatherApp(log: EventLog) -> Kernel {
        makeKernel(
            [
                probe("com.app.location", log: log),
                probe("com.app.weather", requires: [.module("com.app.location")], entitlements: ["weather"], log: log),
                probe("com.app.dashboard", requires: [.module("com.app.weather")], log: log),
                probe("com.app.widgets", requires: [.module("com.app.dashboard")], log: log),
                probe("com.app.news", requires: [.module("com.app.weather", optional: true)], log: log),
                probe("com.app.sports", log: log),
            ], entitlements: ["weather"])
    }

    @Test("revoking an entitlement deactivates its modules and their dependents, dependents first")
    func revokeCascades() async throws {
        let log = EventLog()
        let kernel = weatherApp(log: log)
        try await kernel.boot()
        try await kernel.revoke("weather")
        #expect(log.deactivations == ["com.app.widgets", "com.app.dashboard", "com.app.weather"])
        let states = await kernel.states
        #expect(
            states["com.app.weather"]
                == .blocked(
                    by: [.entitlement("weather")],
                    reason: "it needs the entitlement 'weather', not granted."))
        #expect(states["com.app.dashboard"]?.name == "blocked")
        #expect(
            states["com.app.widgets"]?.reason?.contains("Cause: com.app.weather: it needs the entitlement 'weather'")
                == true)
        #expect(states["com.app.location"] == .active)
        #expect(states["com.app.news"] == .active)
        #expect(states["com.app.sports"] == .active)
        #expect(await kernel.grantedEntitlements.isEmpty)
        await kernel.shutdown()
    }

    @Test("granting it again reactivates them, dependencies first, with fresh instances")
    func grantReactivates() async throws {
        let log = EventLog()
        let kernel = weatherApp(log: log)
        try await kernel.boot()
        try await kernel.revoke("weather")
        let activationsBefore = log.activations.count
        try await kernel.grant("weather")
        #expect(
            Array(log.activations.dropFirst(activationsBefore)) == [
                "com.app.weather", "com.app.dashboard", "com.app.widgets",
            ])
        #expect(await kernel.states.values.allSatisfy { $0 == .active })
        await kernel.shutdown()
    }

    @Test("observers see active → deactivated → blocked on revoke, then authorized → active on grant")
    func observedRevocation() async throws {
        let log = EventLog()
        let kernel = weatherApp(log: log)
        try await kernel.boot()
        let changes = kernel.stateChanges()
        try await kernel.revoke("weather")
        try await kernel.grant("weather")
        await kernel.shutdown()
        var weather: [String] = []
        for await change in changes where change.id == "com.app.weather" { weather.append(change.to.name) }
        #expect(weather == ["deactivated", "blocked", "authorized", "active", "deactivated"])
    }

    @Test("installing a module validates it against the running graph and activates it")
    func install() async throws {
        let log = EventLog()
        let kernel = makeKernel([
            probe("com.app.dashboard", requires: [.module("com.app.weather", optional: true)], log: log)
        ])
        try await kernel.boot()
        let state = try await kernel.install(probe("com.app.weather", log: log))
        #expect(state == .active)
        #expect(await kernel.report()["com.app.weather"]?.activationTime != nil)
        await kernel.shutdown()
    }

    @Test("a module waiting for a missing dependency comes up when the dependency is installed")
    func installUnblocks() async throws {
        let kernel = makeKernel([probe("com.app.dashboard", requires: [.module("com.app.weather")])])
        try await kernel.boot()
        #expect(await kernel.state(of: "com.app.dashboard")?.name == "blocked")
        try await kernel.install(probe("com.app.weather"))
        #expect(await kernel.state(of: "com.app.dashboard") == .active)
        #expect(await kernel.diagnostics.with(.missingDependency).isEmpty)
        await kernel.shutdown()
    }

    @Test("an install that would break the graph is refused with its diagnostics, and nothing changes")
    func installRefused() async throws {
        let kernel = makeKernel([
            probe("com.app.weather", version: "1.0.0"),
            probe("com.app.loop-a", requires: [.module("com.app.loop-b")]),
        ])
        try await kernel.boot()
        let duplicate = await #expect(throws: KernelError.self) {
            try await kernel.install(probe("com.app.weather", version: "2.0.0"))
        }
        #expect(duplicate?.code == .installRefused)
        #expect(duplicate?.diagnostics.map(\.code) == [.duplicateIdentifier])
        let cycle = await #expect(throws: KernelError.self) {
            try await kernel.install(probe("com.app.loop-b", requires: [.module("com.app.loop-a")]))
        }
        #expect(cycle?.diagnostics.contains { $0.code == .dependencyCycle } == true)
        let incompatible = await #expect(throws: KernelError.self) {
            try await kernel.install(probe("com.app.future", compatibility: Compatibility(host: "3.0.0"..<"4.0.0")))
        }
        #expect(incompatible?.diagnostics.map(\.code) == [.incompatibleHostVersion])
        #expect(await kernel.states.count == 2)
        #expect(await kernel.state(of: "com.app.weather") == .active)
        await kernel.shutdown()
    }

    @Test("uninstalling a module that active modules require is refused by default, naming them")
    func uninstallRefused() async throws {
        let kernel = makeKernel([
            probe("com.app.weather"),
            probe("com.app.dashboard", requires: [.module("com.app.weather")]),
        ])
        try await kernel.boot()
        let error = await #expect(throws: KernelError.self) { try await kernel.uninstall("com.app.weather") }
        #expect(error?.code == .uninstallRefused)
        #expect(error?.diagnostics.first?.modules == ["com.app.weather", "com.app.dashboard"])
        #expect(await kernel.state(of: "com.app.weather") == .active)
        await kernel.shutdown()
    }

    @Test("uninstalling with dependents: .deactivate stops the dependents first and leaves them blocked")
    func uninstallCascades() async throws {
        let log = EventLog()
        let kernel = makeKernel([
            probe("com.app.weather", log: log),
            probe("com.app.dashboard", requires: [.module("com.app.weather")], log: log),
            probe("com.app.news", requires: [.module("com.app.weather", optional: true)], log: log),
        ])
        try await kernel.boot()
        try await kernel.uninstall("com.app.weather", dependents: .deactivate)
        #expect(log.deactivations == ["com.app.dashboard", "com.app.weather"])
        #expect(await kernel.state(of: "com.app.weather") == nil)
        #expect(
            await kernel.state(of: "com.app.dashboard")?.reason
                == "com.app.dashboard requires com.app.weather, which is not installed.")
        #expect(await kernel.state(of: "com.app.news") == .active)
        let missing = await #expect(throws: KernelError.self) { try await kernel.uninstall("com.app.weather") }
        #expect(missing?.code == .unknownModule)
        await kernel.shutdown()
    }

    @Test("changes before boot are refused")
    func beforeBoot() async {
        let kernel = makeKernel([probe("com.app.one")])
        let error = await #expect(throws: KernelError.self) { try await kernel.grant("x") }
        #expect(error?.code == .notBooted)
    }

    @Test("concurrent grants and revokes are applied one at a time and end consistent", .timeLimit(.minutes(1)))
    func concurrentChanges() async throws {
        let log = EventLog()
        let kernel = weatherApp(log: log)
        try await kernel.boot()
        await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<50 {
                group.addTask {
                    round.isMultiple(of: 2) ? try await kernel.revoke("weather") : try await kernel.grant("weather")
                }
            }
        }
        try await kernel.grant("weather")
        #expect(await kernel.states.values.allSatisfy { $0 == .active })
        let activations = log.activations.filter { $0 == "com.app.weather" }.count
        let deactivations = log.deactivations.filter { $0 == "com.app.weather" }.count
        #expect(activations == deactivations + 1)
        await kernel.shutdown()
    }
}

@Suite struct RuntimeEdgeTests {
    @Test("installing a module that is already installed is refused, saying so")
    func installTwice() async throws {
        let kernel = makeKernel([probe("com.app.weather", version: "1.4.0")])
        try await kernel.boot()
        let error = await #expect(throws: KernelError.self) { try await kernel.install(probe("com.app.weather")) }
        #expect(
            error?.message == "com.app.weather is already installed (version 1.4.0). Uninstall it first to replace it.")
        #expect(error?.diagnostics.map(\.code) == [.duplicateIdentifier])
        await kernel.shutdown()
    }

    @Test("a failed module can be replaced: uninstall it, install a fixed one, and its dependents come up")
    func replaceFailedModule() async throws {
        let kernel = makeKernel([
            probe("com.app.database", behavior: .fail),
            probe("com.app.store", requires: [.module("com.app.database")]),
        ])
        try await kernel.boot()
        #expect(await kernel.state(of: "com.app.store")?.name == "blocked")
        try await kernel.uninstall("com.app.database")
        try await kernel.install(probe("com.app.database", version: "1.0.1"))
        #expect(await kernel.state(of: "com.app.database") == .active)
        #expect(await kernel.state(of: "com.app.store") == .active)
        #expect(await kernel.diagnostics.with(.activationFailed).isEmpty)
        await kernel.shutdown()
    }

    @Test("a module whose deactivate hangs does not stop shutdown; it is reported", .timeLimit(.minutes(1)))
    func hangingDeactivation() async throws {
        let gate = Gate()
        let clock = ManualClock()
        let log = EventLog()
        let kernel = makeKernel(
            [
                ModuleFactory(manifest: Manifest(id: "com.app.sticky", version: "1.0.0")) {
                    Probe(activate: { _ in }, deactivate: { await gate.wait() })
                },
                probe("com.app.base", log: log),
                probe("com.app.top", requires: [.module("com.app.base")], log: log),
            ], options: KernelOptions(deactivationTimeLimit: .seconds(10), clock: clock))
        try await kernel.boot()
        let shutdown = Task { await kernel.shutdown() }
        // The deactivations' limit, not the stranded-handler sweep's timer (an hour away) that boot set.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(10))
        // One timer covers every deactivation under way: wait until base (after top) is done, so that only sticky,
        // queued before base and so started, times out.
        while await kernel.state(of: "com.app.base") != .deactivated { await Task.yield() }
        clock.advance(by: .seconds(10))
        await shutdown.value
        #expect(log.deactivations == ["com.app.top", "com.app.base"])
        #expect(await kernel.states.values.allSatisfy { $0 == .deactivated })
        let warning = try #require(await kernel.diagnostics.with(.deactivationTimedOut).first)
        #expect(warning.modules == ["com.app.sticky"])
        #expect(warning.severity == .warning)
        gate.open()
    }
}

/// What a log handler was told, as a stream a test can wait on.
struct StreamingLogHandler: LogHandler {
    let messages: AsyncStream<String>.Continuation
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { messages.yield("\(event.message)") }
}

@Suite struct LateDeactivationTests {
    @Test(
        "a deactivation given up on while its module's work winds down never runs that instance's deactivate() after",
        .timeLimit(.minutes(1)))
    func lateDeactivation() async throws {
        let gate = Gate()
        let clock = ManualClock()
        let (messages, tell) = AsyncStream.makeStream(of: String.self)
        let kernel = Kernel(
            catalog: catalog([
                ModuleFactory(manifest: Manifest(id: "com.app.slow", version: "1.0.0", entitlements: ["slow"])) {
                    // Its task waits at the gate, cancelled or not: the module's work does not wind down in time.
                    Probe(
                        activate: { context in context.task { await gate.wait() } },
                        deactivate: { tell.yield("deactivate() ran") })
                }
            ]), host: testHost, entitlements: .granted(["slow"]),
            options: KernelOptions(deactivationTimeLimit: .seconds(10), clock: clock),
            logger: Logger(label: "test") { _ in StreamingLogHandler(messages: tell) })
        try await kernel.boot()
        let revoking = Task { try await kernel.revoke("slow") }
        await clock.sleepers(reaching: 1, dueWithin: .seconds(10))
        clock.advance(by: .seconds(10))
        try await revoking.value
        #expect(await kernel.state(of: "com.app.slow") != .active)

        // The module comes back; then the first instance's task ends at last.
        try await kernel.grant("slow")
        #expect(await kernel.state(of: "com.app.slow") == .active)
        gate.open()
        var outcome: String?
        for await message in messages where message.hasPrefix("deactivate()") {
            outcome = message
            break
        }
        #expect(outcome == "deactivate() was not run: the kernel stopped waiting for the module's work to end first")
        await kernel.shutdown()
    }
}
