import Configuration
import Foundation
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicWeb
import Synchronization
import Testing
import Tracing

/// A module with a required secret and a number with a default; it keeps what it read.
struct MailerModule: Module {
    static let manifest = Manifest(id: "com.test.mailer", version: "1.0.0")
    static let apiKey = ConfigurationKey<String>("apiKey", secret: true)
    static let retries = ConfigurationKey<Int>("retries", default: 3)
    static let host = ConfigurationKey<String>("host", default: "smtp.example")
    static let read = Locked<[String]>([])

    static func register(in module: inout ModuleRegistrar) {
        module.configuration(apiKey, retries, host)
    }

    func activate(_ context: ActivationContext) async throws {
        let key = try context.configuration[Self.apiKey]
        let retries = try context.configuration[Self.retries]
        context.logger.info("mailer configured", metadata: ["retries": "\(retries)"])
        Self.read.withLock { $0.append("\(context.id): \(key.count) characters, \(retries) retries") }
    }
}

/// A module that observes a number and a secret; it hands the test its stream of the number.
struct RefresherModule: Module {
    static let manifest = Manifest(id: "com.test.refresher", version: "1.0.0")
    static let minutes = ConfigurationKey<Int>("minutes", default: 15)
    static let token = ConfigurationKey<String>("token", secret: true)
    static let minutesUpdates = Locked<Feed<Int>?>(nil)

    static func register(in module: inout ModuleRegistrar) {
        module.configuration(minutes, token)
    }

    func activate(_ context: ActivationContext) async throws {
        let updates = try context.configuration.updates(of: Self.minutes)
        Self.minutesUpdates.withLock { $0 = updates }
    }
}

/// A kernel over the mailer with configuration from `environment`, logging to `log`, tracing to `tracer`.
private func mailerKernel(
    environment: [String: String], log: InMemoryLogHandler, tracer: InMemoryTracer, metrics: TestMetrics
) -> Kernel {
    var options = KernelOptions()
    options.configurationProviders = [EnvironmentVariablesProvider(environmentVariables: environment)]
    options.tracer = tracer
    options.metricsFactory = metrics
    return Kernel(
        modules: [MailerModule.self], host: HostEnvironment(version: "1.0.0"),
        extensionPoints: WebHost.extensionPoints, options: options, logger: Logger(label: "test") { _ in log })
}

/// A module that reads a key it never declared, which has no default.
struct CarelessReaderModule: Module {
    static let manifest = Manifest(id: "com.test.careless", version: "1.0.0")
    static let undeclared = ConfigurationKey<String>("endpoint")

    func activate(_ context: ActivationContext) async throws {
        _ = try context.configuration[Self.undeclared]
    }
}

@Suite("Configuration", .serialized)
struct ConfigurationTests {
    @Test("reading an undeclared key without a default fails the module with the fix, instead of stopping the process")
    func undeclaredKey() async throws {
        let kernel = Kernel(modules: [CarelessReaderModule.self], host: HostEnvironment(version: "1.0.0"))
        let report = try await kernel.boot()
        guard case .failed(let reason)? = report["com.test.careless"]?.state else {
            Issue.record("the careless reader should have failed: \(report.table)")
            return
        }
        #expect(reason.contains("endpoint was not declared") && reason.contains("module.configuration"))
        #expect(throws: ConfigurationError.self) { try ModuleConfiguration()[CarelessReaderModule.undeclared] }
        await kernel.shutdown()
    }

    @Test("a missing required key is a boot diagnostic naming the module, the key, where it looked and the fix")
    func missingKey() async throws {
        let kernel = mailerKernel(
            environment: [:], log: InMemoryLogHandler(), tracer: InMemoryTracer(), metrics: TestMetrics())
        let report = try await kernel.boot()
        let diagnostic = try #require(report.diagnostics.first { $0.code == .configurationMissing })
        #expect(diagnostic.modules == ["com.test.mailer"])
        #expect(diagnostic.message.contains("com.test.mailer.apiKey (string) has no value: looked in"))
        #expect(diagnostic.message.contains("Environment"))
        #expect(diagnostic.fix.contains("COM_TEST_MAILER_API_KEY"))
        guard case .failed(let reason)? = report["com.test.mailer"]?.state else {
            Issue.record("the mailer should have failed")
            return
        }
        #expect(reason.contains("com.test.mailer.apiKey"))
        #expect(
            !MailerModule.read.withLock { $0 }.contains { $0.hasPrefix("com.test.mailer") && $0.contains("0 char") })
        await kernel.shutdown()
    }

    @Test("a malformed value is a boot diagnostic, and the module does not run")
    func malformedValue() async throws {
        let kernel = mailerKernel(
            environment: ["COM_TEST_MAILER_API_KEY": "k", "COM_TEST_MAILER_RETRIES": "several"],
            log: InMemoryLogHandler(), tracer: InMemoryTracer(), metrics: TestMetrics())
        let report = try await kernel.boot()
        let diagnostic = try #require(report.diagnostics.first { $0.code == .configurationMalformed })
        #expect(diagnostic.message.contains("com.test.mailer.retries is not a valid int"))
        #expect(report["com.test.mailer"]?.state.name == "failed")
        await kernel.shutdown()
    }

    @Test(
        "a key set in the environment reaches the module; a secret's value is nowhere in logs, pages, metrics or traces"
    )
    func secretStaysSecret() async throws {
        let secret = "s3cr3t-Value-9f1e2d"
        let log = InMemoryLogHandler()
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let kernel = mailerKernel(
            environment: ["COM_TEST_MAILER_API_KEY": secret, "COM_TEST_MAILER_RETRIES": "5"], log: log,
            tracer: tracer, metrics: metrics)
        let report = try await kernel.boot()
        #expect(report["com.test.mailer"]?.state == .active)
        #expect(MailerModule.read.withLock { $0 }.contains("com.test.mailer: \(secret.count) characters, 5 retries"))
        let entries = await kernel.configuration(of: "com.test.mailer")
        #expect(entries.first { $0.key == "com.test.mailer.retries" }?.value == "5")
        #expect(entries.first { $0.key == "com.test.mailer.host" }?.isSupplied == false)

        let web = WebHost(
            kernel: kernel, catalog: ModuleCatalog(modules: [MailerModule.self]), scheme: "ghost", title: "Mail",
            logger: Logger(label: "test.web") { _ in log },
            operations: OperationsOptions(metrics: { metrics.text }))
        web.readiness.markReady()
        // Configuration is operator detail: on the admin port's page, as /metrics is.
        let pages = try await Application(router: web.adminRouter()).test(.router) { client in
            let modules = try await client.get("/")
            #expect(modules.body.contains("com.test.mailer.apiKey"))
            #expect(modules.body.contains("•••••• (secret)"))
            #expect(modules.body.contains("com.test.mailer.retries</td><td>5"))
            let metricsText = try await client.get("/metrics").body
            let ready = try await client.get("/health/ready").body
            return modules.body + metricsText + ready
        }
        await kernel.shutdown()
        let logs = log.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        let traces = tracer.finishedSpans.map(\.text).joined(separator: "\n")
        let diagnostics = report.diagnostics.map(\.description).joined(separator: "\n")
        for (place, text) in [
            ("logs", logs), ("pages", pages), ("traces", traces), ("metrics", metrics.text),
            ("diagnostics", diagnostics),
        ] {
            #expect(!text.contains(secret), "the secret appeared in the \(place)")
        }
        #expect(!logs.isEmpty && !traces.isEmpty)
    }
}

@Suite("Configuration reloads", .serialized)
struct ConfigurationReloadTests {
    private static let minutesKey = AbsoluteConfigKey(["com", "test", "refresher", "minutes"])
    private static let tokenKey = AbsoluteConfigKey(["com", "test", "refresher", "token"])

    /// A booted kernel over the refresher, configured by an in-memory provider (minutes 20, token "t0") the test
    /// can change, and the refresher's feed of its minutes.
    private static func bootRefresher() async throws -> (ChangeableProvider, Kernel, Feed<Int>) {
        let provider = ChangeableProvider(
            [minutesKey: 20, tokenKey: ConfigValue(.string("t0"), isSecret: true)])
        var options = KernelOptions()
        options.configurationProviders = [provider]
        let kernel = Kernel(modules: [RefresherModule.self], host: HostEnvironment(version: "1.0.0"), options: options)
        _ = try await kernel.boot()
        return (provider, kernel, try #require(RefresherModule.minutesUpdates.withLock { $0 }))
    }

    @Test(
        "a reloaded value reaches the module that observes it; a malformed one is reported and the last good value kept"
    )
    func reloadDeliversGoodValuesOnly() async throws {
        let secret = "t0ken-7d1c-secret"
        let provider = ChangeableProvider(
            [Self.minutesKey: 20, Self.tokenKey: ConfigValue(.string(secret), isSecret: true)])
        let log = InMemoryLogHandler()
        var options = KernelOptions()
        options.configurationProviders = [provider]
        let kernel = Kernel(
            modules: [RefresherModule.self], host: HostEnvironment(version: "1.0.0"), options: options,
            logger: Logger(label: "test") { _ in log })
        let report = try await kernel.boot()
        #expect(report["com.test.refresher"]?.state == .active)
        let stream = try #require(RefresherModule.minutesUpdates.withLock { $0 })
        var updates = stream.makeAsyncIterator()
        #expect(await updates.next() == 20)

        provider.setValue(30, forKey: Self.minutesKey)
        await kernel.reloadConfiguration()
        #expect(await updates.next() == 30)

        provider.setValue("soon", forKey: Self.minutesKey)
        provider.setValue(ConfigValue(.string(secret + "-2"), isSecret: true), forKey: Self.tokenKey)
        await kernel.reloadConfiguration()
        let diagnostic = try #require(await kernel.diagnostics.first { $0.code == .configurationReloadRejected })
        #expect(diagnostic.modules == ["com.test.refresher"])
        #expect(diagnostic.message.contains("keeps the last good value of com.test.refresher.minutes"))
        #expect(diagnostic.fix.contains("COM_TEST_REFRESHER_MINUTES"))
        let entries = await kernel.configuration(of: "com.test.refresher")
        #expect(entries.first { $0.key == "com.test.refresher.minutes" }?.value == "30")
        #expect(entries.first { $0.key == "com.test.refresher.token" }?.value == "(secret)")

        provider.setValue(45, forKey: Self.minutesKey)
        await kernel.reloadConfiguration()
        // The next value after 30 is 45: "soon" never reached the module.
        #expect(await updates.next() == 45)
        #expect(await kernel.diagnostics.contains { $0.code == .configurationReloadRejected } == false)

        await kernel.shutdown()
        // The stream ends with the module.
        #expect(await updates.next() == nil)
        let logs = log.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(logs.contains("com.test.refresher.minutes"))
        #expect(!logs.contains(secret), "a secret's value appeared in the logs")
        #expect(!diagnostic.description.contains(secret))
    }

    @Test(
        "the kernel reloads on its own when a provider reports new values: no explicit reload",
        .timeLimit(.minutes(1)))
    func reloadsWhenProviderChanges() async throws {
        let (provider, kernel, feed) = try await Self.bootRefresher()
        var updates = feed.makeAsyncIterator()
        #expect(await updates.next() == 20)

        // The kernel watches the provider from boot on; a change made before its watch begins is in the first
        // snapshot it sees, so this cannot race.
        provider.setValue(25, forKey: Self.minutesKey)
        #expect(await updates.next() == 25)
        await kernel.shutdown()
    }

    @Test("changes of other keys take no room in a module's buffer: its unread value of its own key is kept")
    func otherKeysTakeNoRoom() async throws {
        let (provider, kernel, feed) = try await Self.bootRefresher()
        var updates = feed.makeAsyncIterator()
        #expect(await updates.next() == 20)

        provider.setValue(30, forKey: Self.minutesKey)
        await kernel.reloadConfiguration()
        // More changes of the token than the minutes' buffer (8) holds, none of them read.
        for version in 1...10 {
            provider.setValue(ConfigValue(.string("t\(version)"), isSecret: true), forKey: Self.tokenKey)
            await kernel.reloadConfiguration()
        }
        await kernel.shutdown()
        var unread: [Int] = []
        while let minutes = await updates.next() { unread.append(minutes) }
        #expect(unread == [30])
    }

    @Test("a reloading JSON file provider's new values reach the module once the provider and the kernel reload")
    func reloadingFileProvider() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-reload-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json")
        let write: @Sendable (Int) throws -> Void = { minutes in
            let json = #"{"com": {"test": {"refresher": {"minutes": \#(minutes), "token": "t"}}}}"#
            try Data(json.utf8).write(to: file, options: .atomic)
            // A distinct modification time for each version, however coarse the file system's clock.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000_000 + Double(minutes))], ofItemAtPath: file.path)
        }
        try write(20)
        // Configured as Ghost configures it; the test never runs the provider's poll loop (a timer and SIGHUP).
        let location = InMemoryProvider(values: ["filePath": ConfigValue(.string(file.path), isSecret: false)])
        let provider = try await ReloadingFileProvider<JSONSnapshot>(config: ConfigReader(provider: location))
        var options = KernelOptions()
        options.configurationProviders = [provider]
        let kernel = Kernel(
            modules: [RefresherModule.self], host: HostEnvironment(version: "1.0.0"), options: options,
            logger: Logger(label: "test") { _ in InMemoryLogHandler() })
        try await kernel.boot()
        let stream = try #require(RefresherModule.minutesUpdates.withLock { $0 })
        var updates = stream.makeAsyncIterator()
        #expect(await updates.next() == 20)

        try write(21)
        // A fetch makes the provider check the file now, as a poll tick or SIGHUP would; then the kernel reloads
        // (it also does on its own when it sees the provider's new snapshot; a second reload changes nothing).
        let fetched = try await provider.fetchValue(forKey: Self.minutesKey, type: .int)
        #expect(fetched.value?.content == .int(21), "the provider did not see the file's new value")
        await kernel.reloadConfiguration()
        let entries = await kernel.configuration(of: "com.test.refresher")
        #expect(entries.first { $0.key == "com.test.refresher.minutes" }?.value == "21")

        // Shutting down ends the module's stream, so reading what it received cannot wait forever.
        await kernel.shutdown()
        var received: [Int] = []
        while let minutes = await updates.next() { received.append(minutes) }
        #expect(received == [21], "the module should receive the file's new value exactly once")
    }
}

extension FinishedInMemorySpan {
    /// Every attribute and event, as text, for searching.
    fileprivate var text: String {
        var text = operationName
        // swift-format-ignore: ReplaceForEachWithForLoop
        attributes.forEach { key, value in text += " \(key)=\(value)" }
        for event in events { text += " \(event.name)" }
        return text
    }
}

extension TestMetrics {
    /// Every metric's label and dimensions, as text.
    fileprivate var text: String {
        let all =
            counters.map { ($0.label, $0.dimensions) } + timers.map { ($0.label, $0.dimensions) }
            + recorders.map { ($0.label, $0.dimensions) }
        return all.map { label, dimensions in label + dimensions.map { " \($0)=\($1)" }.joined() }
            .joined(separator: "\n")
    }
}
