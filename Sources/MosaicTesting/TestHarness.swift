public import Logging
public import Mosaic
public import MosaicKernel

/// Runs one module, or a few, without the rest of the app.
///
/// ```swift
/// var harness = TestHarness(WeatherModule.self)
/// harness.override(.weatherData) { StubWeather(["Oslo": "Snow"]) }
/// let app = try await harness.start()
/// #expect(await app.open("ghost://dashboard/weather/city?name=Oslo") == .handled(tab: "dashboard", module: "com.ghost.weather"))
/// ```
///
/// What the test leaves out is stood in for:
/// - a required module that is not loaded is replaced by an empty module of the same id and a version in range;
/// - the host accepts every loaded module: its version, platform version and features are the least they ask for;
/// - every entitlement the loaded modules declare is granted, unless the test revokes it.
///
/// Services are not stood in for: a service a loaded module uses that nothing in the test provides makes
/// ``start()`` throw, naming the service, until the test overrides it.
///
/// A harness is a value; each ``start()`` builds its own kernel, so tests run in parallel without sharing anything.
public struct TestHarness: Sendable {
    /// The modules under test, in the order given.
    public private(set) var modules: [ModuleFactory]
    /// The host the modules run in; `nil` makes one that accepts every loaded module.
    public var host: HostEnvironment?
    /// The entitlements granted at start; `nil` grants every one the loaded modules declare.
    public var entitlements: Set<Entitlement>?
    /// Kernel options; time limits default to 30 seconds, so that a hanging module fails the test and a loaded
    /// machine (a sanitizer, tests in parallel) does not (a test of a time limit sets a `ManualClock`), and links of
    /// any scheme are accepted (a module's handlers do not depend on the app's scheme; set
    /// `options.deeplinkRules` to test refusals). Without a `stateDirectory`, each start keeps persisted state in
    /// a fresh temporary directory, removed at shutdown.
    public var options = KernelOptions(
        activationTimeLimit: .seconds(30), deactivationTimeLimit: .seconds(30), participantTimeLimit: .seconds(30),
        deeplinkRules: DeeplinkRules(allowedSchemes: [DeeplinkRules.anyScheme]), pendingDeeplinkTimeLimit: .seconds(30))
    /// Extension points the host declares beyond the built-in ones; `nil` declares every point the loaded modules
    /// contribute to, as the host they are written for would.
    public var extensionPoints: [AnyExtensionPoint]?
    /// The host's standard, for modules that require one.
    public var standard: (any Standard)?
    /// Whether ``start()`` also starts the modules that start on demand (with what they require), as a test of
    /// what they do wants; `false` leaves them on standby, to test what starts them.
    public var startsOnDemandModules = true
    /// Where the kernel logs; nowhere by default, since the report holds every problem.
    public var logger = Logger(label: "mosaic.testing") { _ in SwiftLogNoOpLogHandler() }
    /// Services the test provides, ranked above every module's.
    var services = ServiceRegistrar()
    /// Entitlements withheld from the default grant.
    var withheld: Set<Entitlement> = []
    /// Faults to inject, by module.
    var faults: [ModuleID: ActivationFault] = [:]

    /// A harness for module types listed in code.
    public init(_ modules: any Module.Type...) {
        self.init(modules: modules)
    }

    /// A harness for module types listed in code, such as every module of an app's groups.
    public init(modules: [any Module.Type]) {
        self.modules = modules.map { ModuleFactory(module: $0) }
    }

    /// A harness for modules made by factories (for configured instances or manifest-driven modules).
    public init(factories: [ModuleFactory]) {
        self.modules = factories
    }

    /// Adds a module to the test.
    public mutating func load(_ module: any Module.Type) {
        modules.append(ModuleFactory(module: module))
    }

    /// Replaces whatever provides the service `key` names — a loaded module or nothing at all — with `make`, built
    /// once per start.
    ///
    /// To keep a handle on the stand-in, make it first: `let spy = Spy(); harness.override(.weatherData) { spy }`.
    public mutating func override<T: Sendable>(_ key: ServiceKey<T>, with make: @escaping @Sendable () throws -> T) {
        services.singleton(key, rank: .override, factory: make)
    }

    /// Makes every resolution of the service `key` names throw `error`, to test the code that uses it.
    public mutating func failService<T: Sendable>(
        _ key: ServiceKey<T>,
        with error: any Error = InjectedFault("injected failure of \(T.self)", code: .service)
    ) {
        services.transient(key, rank: .override) { () throws -> T in throw error }
    }

    /// Grants `entitlement` at start (on top of the declared ones when ``entitlements`` is `nil`).
    public mutating func grant(_ entitlement: Entitlement) {
        withheld.remove(entitlement)
        entitlements?.insert(entitlement)
    }

    /// Withholds `entitlement` at start.
    public mutating func revoke(_ entitlement: Entitlement) {
        withheld.insert(entitlement)
        entitlements?.remove(entitlement)
    }

    /// Makes module `id`'s `activate` throw `error` (before the module's own code runs).
    public mutating func failActivation(
        of id: ModuleID, with error: any Error = InjectedFault("injected failure", code: .activation)
    ) {
        faults[id] = .throwing(error)
    }

    /// Makes module `id`'s `activate` never return, so the kernel fails it after ``options``'
    /// `activationTimeLimit`.
    public mutating func hangActivation(of id: ModuleID) {
        faults[id] = .hanging
    }

    /// Runs module `id` in a process of its own, as a host that isolates it would.
    ///
    /// - `executable` serves the test's modules: an executable target of the test's package whose `main` calls
    ///   `IsolatedModuleProcess.serveIfAsked(_:)` with a catalog of them.
    /// - Overrides and injected faults act in the test's process, not in the module's.
    public mutating func isolate(_ id: ModuleID, executable: String) {
        options.isolation.modules.insert(id)
        options.isolation.executable = executable
    }

    /// Every problem the kernel finds with the test's modules, without running any of them.
    public func validate() -> [Diagnostic] {
        let setup = Setup(self)
        return setup.diagnostics
            + Kernel.validate(
                setup.catalog, host: setup.host, entitlements: .granted(setup.entitlements), services: services,
                standard: standard, extensionPoints: setup.extensionPoints)
    }

    /// Boots a kernel with the test's modules and returns it running.
    ///
    /// - Throws: ``HarnessError`` when validation finds an error (such as a used service nobody provides), with
    ///   every such problem and its fix. Failures at run time — including injected faults — do not throw: they
    ///   are in ``TestApp/report()``.
    public func start() async throws -> TestApp {
        let setup = Setup(self)
        let problems = validate().filter { $0.severity == .error }
        guard problems.isEmpty else { throw HarnessError(problems) }
        let navigations = Navigations()
        var options = options
        let scratch = options.stateDirectory == nil ? try ScratchDirectory() : nil
        options.stateDirectory = options.stateDirectory ?? scratch?.path
        options.watchesReleases = true
        let kernel = Kernel(
            catalog: setup.catalog, host: setup.host, entitlements: .granted(setup.entitlements),
            services: services, standard: standard, extensionPoints: setup.extensionPoints,
            navigator: { tab in navigations.append(tab) }, options: options, logger: logger)
        var report = try await kernel.boot()
        if startsOnDemandModules {
            let waiting = report.modules.filter { $0.state == .standby }
            for module in waiting { try await kernel.start(module.id) }
            if !waiting.isEmpty { report = await kernel.report() }
        }
        return TestApp(
            kernel: kernel, bootReport: report, standIns: setup.standIns, navigations: navigations, scratch: scratch)
    }
}
