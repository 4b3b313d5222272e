import Configuration
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
    static let read = Mutex<[String]>([])

    static func register(in module: inout ModuleRegistrar) {
        module.configuration(apiKey, retries, host)
    }

    func activate(_ context: ActivationContext) async throws {
        let key = context.configuration[Self.apiKey]
        let retries = context.configuration[Self.retries]
        context.logger.info("mailer configured", metadata: ["retries": "\(retries)"])
        Self.read.withLock { $0.append("\(context.id): \(key.count) characters, \(retries) retries") }
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

@Suite("Configuration", .serialized)
struct ConfigurationTests {
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
        let pages = try await Application(router: web.router()).test(.router) { client in
            let modules = try await client.get("/modules")
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
