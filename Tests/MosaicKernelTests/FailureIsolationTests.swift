import Foundation
import Mosaic
import MosaicKernel
import Synchronization
import Testing

/// A shared on/off switch.
final class Switch: Sendable {
    private let on = Atomic<Bool>(false)
    var isOn: Bool { on.load(ordering: .relaxed) }
    func set(_ value: Bool) { on.store(value, ordering: .relaxed) }
}

struct DataMissing: Error, CustomStringConvertible { var description: String { "forecast.json is missing" } }

/// Reads a `String` service through `@Injected`.
struct Greeter {
    @Injected(ServiceKey(String.self)) var greeting
}

/// A module whose `String` service fails whenever `failing` is set, read through `@Injected` in a content closure
/// and a link handler (each flips the switch between creating the reader and reading it: a failure in between).
func flakyModule(_ failing: Switch) -> ModuleFactory {
    serviceModule("com.app.flaky") { module in
        module.services.transient(ServiceKey(String.self)) { () throws -> String in
            if failing.isOn { throw DataMissing() }
            return "hello"
        }
        module.contribute(to: .dashboardWidgets, id: "greeting", title: "Greeting") {
            let greeter = Greeter()
            failing.set(true)
            return Panel(.text(try greeter.greeting()))
        }
        module.handle(feature: "greeting") { _, _ in
            let greeter = Greeter()
            failing.set(true)
            _ = try greeter.greeting()
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(1))) struct FailureIsolationTests {
    @Test("an eager service factory that throws fails its provider at activation, naming the service")
    func throwingFactoryFailsProvider() async throws {
        let kernel = makeKernel([
            serviceModule("com.app.weather") {
                $0.services.singleton(.forecast, eager: true) { () throws -> any Forecast in throw DataMissing() }
            },
            ModuleFactory(ForecastReader.self),
            probe("com.app.bystander"),
        ])
        let report = try await kernel.boot()
        let weather = try #require(report["com.app.weather"])
        #expect(weather.state.name == "failed")
        #expect(weather.state.reason?.contains("Forecast") == true, "\(weather.state)")
        #expect(weather.state.reason?.contains("forecast.json is missing") == true, "\(weather.state)")
        #expect(report["com.app.reader"]?.state.name == "blocked", "the module reading it never runs")
        #expect(report["com.app.bystander"]?.state.isActive == true)
        await kernel.shutdown()
    }

    @Test("a lazy service factory that throws fails its first reader, naming the service; its provider stays active")
    func lazyThrowingFactoryFailsReader() async throws {
        let kernel = makeKernel([
            serviceModule("com.app.weather") {
                $0.services.singleton(.forecast) { () throws -> any Forecast in throw DataMissing() }
            },
            probe("com.app.bystander"),
        ])
        let report = try await kernel.boot()
        #expect(report["com.app.weather"]?.state.isActive == true, "nothing ran the factory at boot")
        let error = await #expect(throws: ServiceError.self) { try await kernel.services.resolve(.forecast) }
        #expect(error?.code == .factoryFailed)
        #expect(error?.provider == "com.app.weather")
        #expect(error?.message.contains("forecast.json is missing") == true, "\(String(describing: error))")
        #expect(await kernel.state(of: "com.app.weather")?.isActive == true)
        await kernel.shutdown()
    }

    @Test(
        "@Injected whose factory throws on first use, read in activate as a property or a local, fails that module with the factory's error"
    )
    func injectedReadFailsModule() async throws {
        struct Nosy: Module {
            static let manifest = Manifest(id: "com.app.nosy", version: "1.0.0")
            @Injected(.forecast) var forecast
            func activate(_ context: ActivationContext) async throws { _ = try forecast().text }
        }
        struct Local: Module {
            static let manifest = Manifest(id: "com.app.local", version: "1.0.0")
            static func register(in module: inout ModuleRegistrar) { module.services.use(.forecast) }
            func activate(_ context: ActivationContext) async throws {
                @Injected(.forecast) var forecast
                _ = try forecast().text
            }
        }
        let kernel = makeKernel([
            ModuleFactory(Nosy.self), ModuleFactory(Local.self), probe("com.app.bystander"),
            serviceModule("com.app.weather") {
                $0.services.singleton(.forecast) { () throws -> any Forecast in throw DataMissing() }
            },
        ])
        let report = try await kernel.boot()
        for id: ModuleID in ["com.app.nosy", "com.app.local"] {
            #expect(report[id]?.state.name == "failed", "\(id)")
            #expect(report[id]?.state.reason?.contains("forecast.json is missing") == true, "\(id)")
        }
        #expect(report.table.contains("forecast.json is missing"), "the boot report names the factory's error")
        #expect(report["com.app.weather"]?.state.isActive == true)
        #expect(report["com.app.bystander"]?.state.isActive == true)
        await kernel.shutdown()
    }

    @Test("@Injected failing in a content closure or a link handler refuses that call with the factory's error")
    func injectedFailsTheCall() async throws {
        let failing = Switch()
        let kernel = makeKernel([flakyModule(failing), probe("com.app.bystander")])
        try await kernel.boot()
        let error = await #expect(throws: ServiceError.self) {
            _ = try await kernel.allContributions.values(of: .dashboardWidgets)
        }
        #expect(error?.code == .factoryFailed)
        #expect(error?.message.contains("forecast.json is missing") == true)
        failing.set(false)
        guard case .notHandled(let refused) = await kernel.open("ghost://dashboard/greeting") else {
            Issue.record("the handler's failed read must refuse the link")
            return
        }
        #expect(refused.code == .handlerFailed)
        #expect(refused.message.contains("com.app.flaky") && refused.message.contains("forecast.json is missing"))
        #expect(await kernel.state(of: "com.app.flaky")?.isActive == true, "the module itself stays active")
        #expect(await kernel.state(of: "com.app.bystander")?.isActive == true)
        await kernel.shutdown()
    }

    @Test(
        "in a child process, throwing factories read through @Injected, a feed read twice and an undeclared configuration key leave it alive"
    )
    func childProcessSurvives() async throws {
        let process = Process()
        process.executableURL = try stateWriter()
        process.arguments = ["failing-services"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = try await offThePool {
            defer { process.waitUntilExit() }
            return output.fileHandleForReading.readDataToEndOfFile()
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(lines)")
        #expect(lines.contains("com.child.broken: failed"))
        #expect(lines.contains("com.child.consumer: blocked"))
        #expect(lines.contains("com.child.flaky: active"))
        #expect(lines.contains("com.child.bystander: active"))
        #expect(lines.contains("com.child.careless: failed"))
        #expect(lines.contains { $0.hasPrefix("content: refused") })
        #expect(lines.contains("link: not handled: handler-failed"))
        // A feed read by two tasks at once: the later reader's loop ends, the first keeps the feed.
        #expect(lines.contains("two readers: ended, got a ping"))
        #expect(lines.last == "alive")
    }
}

@Suite(.timeLimit(.minutes(1))) struct ExclusivityTests {
    /// A kernel whose boot holds the operation slot until `gate` opens.
    func heldKernel(_ gate: Gate) -> (Kernel, Task<BootReport, any Error>) {
        let kernel = makeKernel([probe("com.app.slow", behavior: .hang(gate))])
        return (kernel, Task { try await kernel.boot() })
    }

    /// Returns once `count` operations wait for the slot.
    func waitForLine(_ kernel: Kernel, _ count: Int) async {
        while await kernel.waitingOperationCount < count { await Task.yield() }
    }

    @Test("a caller cancelled while it waits for its turn leaves the line, and its operation never runs")
    func cancelledWaiter() async throws {
        let gate = Gate()
        let (kernel, boot) = heldKernel(gate)
        while await kernel.state(of: "com.app.slow") != .authorized { await Task.yield() }
        let grant = Task { try await kernel.grant("weather") }
        await waitForLine(kernel, 1)
        grant.cancel()
        let error = await #expect(throws: KernelError.self) { try await grant.value }
        #expect(error?.code == .cancelled)
        #expect(await kernel.waitingOperationCount == 0)
        gate.open()
        _ = try await boot.value
        #expect(await !kernel.grantedEntitlements.contains("weather"))
        await kernel.shutdown()
    }

    @Test("100 concurrent grant, revoke and install callers complete in exactly their call order")
    func callOrder() async throws {
        let gate = Gate()
        let (kernel, boot) = heldKernel(gate)
        let changes = kernel.stateChanges()
        while await kernel.state(of: "com.app.slow") != .authorized { await Task.yield() }
        var callers: [Task<Void, any Error>] = []
        for caller in 0..<100 {
            let module = ModuleID(rawValue: "com.app.m\(caller / 3)")
            let entitlement = Entitlement(rawValue: "e\(caller / 3)")
            callers.append(
                Task {
                    switch caller % 3 {
                    case 0: try await kernel.install(probe(module, entitlements: [entitlement]))
                    case 1: try await kernel.grant(entitlement)
                    default: try await kernel.revoke(entitlement)
                    }
                })
            await waitForLine(kernel, caller + 1)
        }
        gate.open()
        _ = try await boot.value
        for caller in callers { try await caller.value }
        await kernel.shutdown()
        var seen: [String] = []
        for await change in changes where change.id != "com.app.slow" && change.to != .deactivated {
            if ["blocked", "active"].contains(change.to.name) { seen.append("\(change.id) \(change.to.name)") }
        }
        var expected: [String] = []
        for group in 0..<34 {
            expected.append("com.app.m\(group) blocked")
            if group * 3 + 1 < 100 { expected.append("com.app.m\(group) active") }
            if group * 3 + 2 < 100 { expected.append("com.app.m\(group) blocked") }
        }
        #expect(seen == expected)
    }
}
