import Mosaic
import MosaicKernel
import Synchronization
import Testing

protocol Clock: Sendable { var now: Int { get } }
protocol Forecast: Sendable { var text: String { get } }
protocol Telemetry: Sendable {}

extension ServiceKey where Value == any Clock {
    static var clock: Self { Self() }
}

extension ServiceKey where Value == any Forecast {
    static var forecast: Self { Self() }
}

extension ServiceKey where Value == any Telemetry {
    static var telemetry: Self { Self() }
}
protocol HealthStandard: Standard {}

struct FixedClock: Clock { var now = 42 }
struct ClockForecast: Forecast {
    let clock: any Clock
    var text: String { "sunny at \(clock.now)" }
}
struct PreviewForecast: Forecast { var text: String { "preview" } }
struct NoTelemetry: Telemetry {}
struct PlainStandard: Standard {}
struct HealthyStandard: HealthStandard {}

final class BuildCount: Sendable {
    let value = Atomic<Int>(0)
    func bump() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A probe module with registrations.
func serviceModule(
    _ id: ModuleID, requires dependencies: [Dependency] = [], entitlements: Set<Entitlement> = [],
    log: EventLog? = nil, onActivate: @escaping @Sendable (ActivationContext) async throws -> Void = { _ in },
    register: @escaping @Sendable (inout ModuleRegistrar) -> Void
) -> ModuleFactory {
    ModuleFactory(
        manifest: Manifest(id: id, version: "1.0.0", requires: dependencies, entitlements: entitlements),
        register: register
    ) {
        Probe(
            activate: { context in
                log?.record(.activationStarted(id))
                try await onActivate(context)
                log?.record(.activated(id))
            }, deactivate: { log?.record(.deactivated(id)) })
    }
}

@Suite struct ServiceTests {
    @Test("a module using another's service activates after it and resolves it, with the factory's dependencies")
    func provideAndUse() async throws {
        let log = EventLog()
        let seen = Locked<String?>(nil)
        let kernel = makeKernel([
            serviceModule(
                "com.app.dashboard", log: log,
                onActivate: { context in
                    let forecast = try context.services.resolve(.forecast)
                    seen.withLock { $0 = forecast.text }
                }
            ) { $0.services.use(.forecast) },
            serviceModule("com.app.weather", log: log) {
                $0.services.singleton(.forecast) { (clock: any Clock) in ClockForecast(clock: clock) }
            },
            serviceModule("com.app.time", log: log) { $0.services.singleton(.clock) { FixedClock() } },
        ])
        let report = try await kernel.boot()
        #expect(report.count("active") == 3, "\(report.table)")
        #expect(seen.withLock { $0 } == "sunny at 42")
        #expect(log.activations == ["com.app.time", "com.app.weather", "com.app.dashboard"])
        await kernel.shutdown()
    }

    @Test("a module that can use another and uses its service requires it: one edge, and blocked with it")
    func serviceUseOutranksOptional() async throws {
        let factories = [
            serviceModule(
                "com.app.dashboard",
                requires: [
                    .module("com.app.weather", optional: true), .module("com.app.time"), .module("com.app.time"),
                ]
            ) { $0.services.use(.forecast) },
            serviceModule("com.app.weather", entitlements: ["weather"]) {
                $0.services.singleton(.forecast) { PreviewForecast() }
            },
            serviceModule("com.app.time") { _ in },
        ]
        let graph = ModuleGraph(catalog: catalog(factories), host: testHost)
        #expect(
            graph.edges.map { "\($0.from)>\($0.to)" }
                == ["com.app.dashboard>com.app.time", "com.app.dashboard>com.app.weather"])
        #expect(!graph.edges.contains { $0.kind == .optional })
        #expect(graph.activationOrder.last == "com.app.dashboard")

        let kernel = makeKernel(factories)
        let report = try await kernel.boot()
        let states = Dictionary(uniqueKeysWithValues: report.modules.map { ($0.id, $0.state.name) })
        #expect(states == ["com.app.dashboard": "blocked", "com.app.weather": "blocked", "com.app.time": "active"])
        try await kernel.grant("weather")
        #expect(await kernel.state(of: "com.app.dashboard")?.name == "active")
        // Uninstalling what it requires is refused while it is active.
        await #expect(throws: KernelError.self) { try await kernel.uninstall("com.app.weather") }
        await kernel.shutdown()
    }

    @Test("every service problem is a diagnostic before any factory runs")
    func diagnostics() {
        let builds = BuildCount()
        let diagnostics = Kernel.validate(
            catalog(
                serviceModule("com.app.lonely") { $0.services.use(.telemetry) },
                serviceModule("com.app.one") {
                    $0.services.singleton(.clock) {
                        builds.bump()
                        return FixedClock()
                    }
                },
                serviceModule("com.app.two") { $0.services.singleton(.clock) { FixedClock() } },
                serviceModule("com.app.loop") {
                    $0.services.transient(.forecast) { (_: any Telemetry) in PreviewForecast() }
                },
                serviceModule("com.app.captor") {
                    $0.services.singleton(ServiceKey(String.self)) { (forecast: any Forecast) in forecast.text }
                }),
            host: testHost)
        #expect(builds.count == 0)
        let missing = diagnostics.with(.missingServiceProvider)
        #expect(missing.map(\.modules) == [["com.app.lonely"], ["com.app.loop"]])
        #expect(
            missing.first?.message
                == "com.app.lonely uses MosaicKernelTests.Telemetry, which no module and not the host provides.")
        let duplicate = diagnostics.with(.duplicateServiceProvider)
        #expect(duplicate.count == 1)
        #expect(
            duplicate.first?.message.contains("com.app.one and com.app.two both provide MosaicKernelTests.Clock")
                == true)
        let captive = diagnostics.with(.captiveService)
        #expect(
            captive.first?.message.hasPrefix(
                "the singleton String in com.app.captor depends on MosaicKernelTests.Forecast, which is transient")
                == true)
    }

    @Test("a cycle among factories is reported with its full path")
    func factoryCycle() {
        let diagnostics = Kernel.validate(
            catalog(
                serviceModule("com.app.a") {
                    $0.services.transient(.clock) { (_: any Forecast) in FixedClock() }
                },
                serviceModule("com.app.b") {
                    $0.services.transient(.forecast) { (_: any Clock) in PreviewForecast() }
                }),
            host: testHost)
        let cycle = diagnostics.with(.serviceCycle)
        #expect(cycle.count == 1)
        #expect(
            cycle.first?.message.hasPrefix(
                "MosaicKernelTests.Clock (com.app.a) → MosaicKernelTests.Forecast (com.app.b) → "
                    + "MosaicKernelTests.Clock (com.app.a)") == true)
    }

    @Test("ranks settle competing providers: a fallback gives way, an override wins")
    func ranks() async throws {
        let kernel = makeKernel([
            serviceModule("com.app.default") {
                $0.services.singleton(.forecast, rank: .fallback) { PreviewForecast() }
            },
            serviceModule("com.app.real") {
                $0.services.singleton(.forecast) { (clock: any Clock) in ClockForecast(clock: clock) }
                $0.services.singleton(.clock) { FixedClock(now: 1) }
            },
        ])
        var host = ServiceRegistrar()
        host.singleton(.clock, rank: .override) { FixedClock(now: 7) }
        let overridden = Kernel(
            catalog: catalog([
                serviceModule("com.app.real") {
                    $0.services.singleton(.forecast) { (clock: any Clock) in ClockForecast(clock: clock) }
                    $0.services.singleton(.clock) { FixedClock(now: 1) }
                }
            ]), host: testHost, services: host, logger: quietLogger)
        try await kernel.boot()
        try await overridden.boot()
        #expect(await kernel.diagnostics.isEmpty)
        #expect(try await kernel.services.resolve(.forecast).text == "sunny at 1")
        #expect(try await overridden.services.resolve(.forecast).text == "sunny at 7")
        await kernel.shutdown()
    }

    @Test("a module cannot resolve what it did not declare")
    func leastPrivilege() async throws {
        let outcome = Locked<ServiceError?>(nil)
        let kernel = makeKernel([
            serviceModule("com.app.time") { $0.services.singleton(.clock) { FixedClock() } },
            serviceModule(
                "com.app.nosy", requires: [.module("com.app.time")],
                onActivate: { context in
                    do { _ = try context.services.resolve(.clock) } catch {
                        outcome.withLock { $0 = error as? ServiceError }
                    }
                }
            ) { _ in },
        ])
        try await kernel.boot()
        let error = try #require(outcome.withLock { $0 })
        #expect(error.code == .notDeclared)
        #expect(
            error.message.contains(
                "add `module.services.use(…)` with the key of MosaicKernelTests.Clock to com.app.nosy's registration"))
        await kernel.shutdown()
    }

    @Test("services leave with their module and come back with it")
    func servicesFollowTheirModule() async throws {
        let builds = BuildCount()
        let kernel = makeKernel(
            [
                serviceModule("com.app.weather", entitlements: ["weather"]) {
                    $0.services.singleton(.forecast) {
                        builds.bump()
                        return PreviewForecast()
                    }
                }
            ], entitlements: ["weather"])
        try await kernel.boot()
        let services = await kernel.services
        #expect(try services.resolve(.forecast).text == "preview")
        try await kernel.revoke("weather")
        let error = #expect(throws: ServiceError.self) { try services.resolve(.forecast) }
        #expect(error?.code == .providerInactive)
        #expect(error?.provider == "com.app.weather")
        try await kernel.grant("weather")
        _ = try services.resolve(.forecast)
        #expect(builds.count == 2, "a fresh instance after reactivation")
        await kernel.shutdown()
    }

    @Test("a provider that cannot run blocks the modules that use its services")
    func failedProviderBlocksConsumers() async throws {
        let kernel = makeKernel([
            ModuleFactory(
                manifest: Manifest(id: "com.app.weather", version: "1.0.0"),
                register: { $0.services.singleton(.forecast) { PreviewForecast() } }
            ) { Probe(activate: { _ in throw ActivationError() }, deactivate: {}) },
            serviceModule("com.app.dashboard") { $0.services.use(.forecast) },
        ])
        let report = try await kernel.boot()
        #expect(report["com.app.dashboard"]?.state.name == "blocked")
        #expect(report["com.app.dashboard"]?.state.reason?.contains("com.app.weather failed") == true)
        await kernel.shutdown()
    }

    @Test("the host's standard must conform to what a module requires")
    func standard() async throws {
        let module = serviceModule(
            "com.app.health",
            onActivate: { context in
                #expect(context.standard(as: (any HealthStandard).self) != nil)
            },
            register: { $0.requireStandard((any HealthStandard).self) })
        let mismatch = Kernel.validate(catalog(module), host: testHost, standard: PlainStandard())
        #expect(
            mismatch.with(.standardMismatch).first?.message
                == "com.app.health requires the standard to conform to MosaicKernelTests.HealthStandard; "
                + "MosaicKernelTests.PlainStandard does not.")
        #expect(Kernel.validate(catalog(module), host: testHost).with(.standardMismatch).count == 1)
        let kernel = Kernel(catalog: catalog(module), host: testHost, standard: HealthyStandard(), logger: quietLogger)
        #expect(try await kernel.boot().count("active") == 1)
        await kernel.shutdown()
    }

    @Test("preview mode builds services with their preview factories")
    func previewMode() async throws {
        let module = serviceModule("com.app.weather") {
            $0.services.singleton(.forecast) {
                ClockForecast(clock: FixedClock())
            } preview: {
                PreviewForecast()
            }
        }
        let live = makeKernel([module])
        let preview = makeKernel([module], options: KernelOptions(preview: true))
        try await live.boot()
        try await preview.boot()
        #expect(try await live.services.resolve(.forecast).text == "sunny at 42")
        #expect(try await preview.services.resolve(.forecast).text == "preview")
    }

    @Test("nothing is built before it is resolved: each factory runs at its first resolve, an eager one at activation")
    func builtOnFirstUse() async throws {
        let builds = (singleton: BuildCount(), cached: BuildCount(), transient: BuildCount(), eager: BuildCount())
        let kernel = makeKernel([
            serviceModule("com.app.lazy") {
                $0.services.singleton(.forecast) {
                    builds.singleton.bump()
                    return PreviewForecast()
                }
                $0.services.cached(.clock) {
                    builds.cached.bump()
                    return FixedClock()
                }
                $0.services.transient(ServiceKey(String.self)) {
                    builds.transient.bump()
                    return "new"
                }
                $0.services.singleton(.telemetry, eager: true) {
                    builds.eager.bump()
                    return NoTelemetry()
                }
            }
        ])
        try await kernel.boot()
        func counts() -> [Int] { [builds.singleton.count, builds.cached.count, builds.transient.count] }
        #expect(counts() == [0, 0, 0], "boot ran no factory but the eager one")
        #expect(builds.eager.count == 1)
        let services = await kernel.services
        _ = try services.resolve(.forecast)
        #expect(counts() == [1, 0, 0])
        _ = try services.resolve(.clock)
        _ = try services.resolve(ServiceKey(String.self))
        _ = try services.resolve(ServiceKey(String.self))
        _ = try services.resolve(.forecast)
        #expect(counts() == [1, 1, 2], "a singleton is built once, a transient at every resolve")
        _ = try services.resolve(.telemetry)
        #expect(builds.eager.count == 1)
        await kernel.shutdown()
    }

    @Test("resetCached rebuilds cached services only; resetAll rebuilds singletons too")
    func resets() async throws {
        let cachedBuilds = BuildCount()
        let singletonBuilds = BuildCount()
        let kernel = makeKernel([
            serviceModule("com.app.both") {
                $0.services.cached(.clock) {
                    cachedBuilds.bump()
                    return FixedClock()
                }
                $0.services.singleton(.forecast) {
                    singletonBuilds.bump()
                    return PreviewForecast()
                }
            }
        ])
        try await kernel.boot()
        let services = await kernel.services
        func touch() throws {
            _ = try services.resolve(.clock)
            _ = try services.resolve(.forecast)
        }
        try touch()
        await kernel.resetCached()
        try touch()
        #expect((cachedBuilds.count, singletonBuilds.count) == (2, 1))
        await kernel.resetAll()
        try touch()
        #expect((cachedBuilds.count, singletonBuilds.count) == (3, 2))
        await kernel.shutdown()
    }
}
