import GhostApp
import InMemoryTracing
import Logging
import Metrics
import MetricsTestKit
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing
import Tracing

/// Ghost run by a harness whose kernel sends its spans and metrics to `tracer` and `metrics`.
private func ghost(tracer: InMemoryTracer, metrics: TestMetrics, extra: [any Module.Type] = []) -> TestHarness {
    var harness = TestHarness(modules: AppManifest.groups.flatMap { $0.modules } + extra)
    harness.host = AppManifest.host
    harness.entitlements = AppManifest.defaultEntitlements
    harness.options.deeplinkRules = DeeplinkRules(allowedSchemes: ["ghost"])
    harness.options.tracer = tracer
    harness.options.metricsFactory = metrics
    return harness
}

extension FinishedInMemorySpan {
    func string(_ key: String) -> String? {
        guard case .string(let value)? = attributes.get(key) else { return nil }
        return value
    }

    /// Every attribute and event, as text, for searching.
    var text: String {
        var text = operationName
        // swift-format-ignore: ReplaceForEachWithForLoop
        attributes.forEach { key, value in text += " \(key)=\(value)" }
        for event in events { text += " \(event.name)" }
        return text
    }
}

extension TestMetrics {
    /// Every metric's label and dimensions, as text, for searching.
    var text: String {
        let all =
            counters.map { ($0.label, $0.dimensions) } + timers.map { ($0.label, $0.dimensions) }
            + recorders.map { ($0.label, $0.dimensions) } + meters.map { ($0.label, $0.dimensions) }
        return all.map { label, dimensions in label + dimensions.map { " \($0)=\($1)" }.joined() }
            .joined(separator: "\n")
    }
}

@Suite struct TelemetryTests {
    @Test("booting Ghost makes a boot span with validation, authorization, planning and one activation per module")
    func bootSpans() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let app = try await ghost(tracer: tracer, metrics: metrics).start()
        do {
            let spans = tracer.finishedSpans
            let boot = try #require(spans.first { $0.operationName == "mosaic.boot" })
            let children = spans.filter { $0.parentSpanID == boot.spanID }
            for name in ["mosaic.validate", "mosaic.authorize", "mosaic.plan"] {
                #expect(children.contains { $0.operationName == name }, "\(name) should be a child of the boot span")
            }
            let activations = children.filter { $0.operationName == "mosaic.module.activate" }
            let ids = AppManifest.groups.flatMap { $0.modules }.map { $0.manifest.id.rawValue }
            #expect(Set(activations.compactMap { $0.string("mosaic.module.id") }) == Set(ids))
            for span in activations {
                #expect(span.string("mosaic.outcome") == "completed")
                #expect(span.string("mosaic.cause") == "boot")
                #expect(span.string("mosaic.module.version") != nil)
            }
            // Services built while a module activated are children of its activation span.
            let builds = spans.filter { $0.operationName == "mosaic.service.build" }
            #expect(!builds.isEmpty)
            let activationIDs = Set(activations.map(\.spanID))
            #expect(builds.allSatisfy { build in build.parentSpanID.map(activationIDs.contains) ?? false })

            let weather = [("module", "com.ghost.weather"), ("outcome", "completed")]
            #expect(try metrics.expectTimer("mosaic_module_activation_duration_seconds", weather).values.count == 1)
            #expect(try metrics.expectTimer("mosaic_boot_duration_seconds").values.count == 1)
            #expect(try metrics.expectGauge("mosaic_modules", [("state", "active")]).lastValue == Double(ids.count))
            #expect(try metrics.expectGauge("mosaic_modules", [("state", "failed")]).lastValue == 0)
            let toActive = [("module", "com.ghost.weather"), ("from", "authorized"), ("to", "active")]
            #expect(try metrics.expectCounter("mosaic_module_transitions_total", toActive).totalValue == 1)
            #expect(metrics.counterTotal(label: "mosaic_service_builds_total") > 0)
        }
        await app.shutdown()
    }

    @Test("a module that fails to activate has its span marked as an error, and the failure is counted")
    func failedActivation() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        var options = KernelOptions()
        options.tracer = tracer
        options.metricsFactory = metrics
        let kernel = makeKernel(
            [probe("com.app.database", behavior: .fail), probe("com.app.sibling")], options: options)
        try await kernel.boot()
        let span = try #require(
            tracer.finishedSpans.first {
                $0.operationName == "mosaic.module.activate" && $0.string("mosaic.module.id") == "com.app.database"
            })
        #expect(span.status?.code == .error)
        #expect(span.string("mosaic.outcome") == "failed")
        #expect(!span.errors.isEmpty)
        let failed = [("module", "com.app.database"), ("outcome", "failed")]
        #expect(try metrics.expectTimer("mosaic_module_activation_duration_seconds", failed).values.count == 1)
        #expect(try metrics.expectGauge("mosaic_modules", [("state", "failed")]).lastValue == 1)
        #expect(
            try metrics.expectGauge("mosaic_diagnostics", [("code", "activation.failed"), ("severity", "error")])
                .lastValue == 1)
        await kernel.shutdown()
        let deactivated = [("module", "com.app.sibling"), ("outcome", "completed")]
        #expect(try metrics.expectTimer("mosaic_module_deactivation_duration_seconds", deactivated).values.count == 1)
        #expect(tracer.finishedSpans.contains { $0.operationName == "mosaic.shutdown" })
    }

    @Test("a hung activation's span ends with a time-out event and an error status")
    func timedOutActivation() async throws {
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        let gate = Gate()
        var options = KernelOptions(activationTimeLimit: .seconds(5), clock: clock)
        options.tracer = tracer
        let kernel = makeKernel([probe("com.app.slow", behavior: .hang(gate))], options: options)
        async let booted = kernel.boot()
        await clock.sleepers(reaching: 1)
        clock.advance(by: .seconds(5))
        _ = try await booted
        let span = try #require(tracer.finishedSpans.first { $0.operationName == "mosaic.module.activate" })
        #expect(span.events.map(\.name) == ["mosaic.timed_out"])
        #expect(span.status?.code == .error)
        #expect(span.string("mosaic.outcome") == "timed_out")
        gate.open()
        await kernel.shutdown()
    }

    @Test("module code runs with its module id in the task-local service context")
    func moduleIDInContext() async throws {
        let seen = EventLog()
        let kernel = makeKernel([
            ModuleFactory(manifest: Manifest(id: "com.app.context", version: "1.0.0")) {
                Probe(
                    activate: { _ in
                        if let id = ServiceContext.current?.mosaicModule { seen.record(.activated(id)) }
                    }, deactivate: {})
            }
        ])
        try await kernel.boot()
        #expect(seen.activations == ["com.app.context"])
        await kernel.shutdown()
    }

    @Test("a deeplink's span and count name the route template and outcome, never the link's parameters")
    func deeplinks() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let app = try await ghost(tracer: tracer, metrics: metrics).start()
        do {
            #expect(
                await app.open("ghost://dashboard/weather/city?name=Lisbon")
                    == .handled(tab: "dashboard", module: "com.ghost.weather"))
            _ = await app.open("ghost://dashboard/weather/city?name=Atlantis-7f3a")
            _ = await app.open("ghost://dashboard/no-such-feature-9b1c/action-42?token=hunter2")
            let links = tracer.finishedSpans.filter { $0.operationName == "mosaic.deeplink" }
            #expect(links.count == 3)
            #expect(links[0].string("mosaic.deeplink.feature") == "weather")
            #expect(links[0].string("mosaic.deeplink.action") == "city")
            #expect(links[0].string("mosaic.module.id") == "com.ghost.weather")
            #expect(links[2].string("mosaic.deeplink.feature") == nil)
            let handled = [("route", "weather/city"), ("module", "com.ghost.weather"), ("outcome", "handled")]
            let handledCount = try metrics.expectCounter("mosaic_deeplinks_total", handled).totalValue
            #expect(handledCount == 1)
            let unmatched = [("route", "(unmatched)"), ("module", ""), ("outcome", "no-handler")]
            let unmatchedCount = try metrics.expectCounter("mosaic_deeplinks_total", unmatched).totalValue
            #expect(unmatchedCount == 1)
            // The handler wrote the favourite city: counted by key and writer.
            #expect(metrics.counterTotal(label: "mosaic_state_writes_total") >= 1)
            let everything = tracer.finishedSpans.map(\.text).joined(separator: "\n") + metrics.text
            for secret in ["Lisbon", "Atlantis", "no-such-feature", "action-42", "hunter2"] {
                #expect(!everything.contains(secret), "\(secret) leaked into a span or metric")
            }
        }
        await app.shutdown()
    }

    @Test("events are counted published, delivered and dropped per subscriber, with a publish span")
    func events() async throws {
        struct Ping: Sendable {}
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        var options = KernelOptions()
        options.tracer = tracer
        options.metricsFactory = metrics
        let kernel = makeKernel([], options: options)
        try await kernel.boot()
        let stream = kernel.events.subscribe(to: Ping.self, buffer: 1)
        for _ in 0..<3 { try kernel.events.publish(Ping()) }
        let subscriber = [("event", "Ping"), ("subscriber", "mosaic.host")]
        #expect(
            try metrics.expectCounter("mosaic_events_published_total", [("event", "Ping"), ("module", "mosaic.host")])
                .totalValue == 3)
        #expect(try metrics.expectCounter("mosaic_events_delivered_total", subscriber).totalValue == 3)
        #expect(try metrics.expectCounter("mosaic_events_dropped_total", subscriber).totalValue == 2)
        #expect(try metrics.expectGauge("mosaic_event_buffer_depth", subscriber).lastValue == 1)
        let publish = try #require(tracer.finishedSpans.first { $0.operationName == "publish Ping" })
        #expect(publish.kind == .producer)
        #expect(publish.string("messaging.destination.name") == "Ping")
        #expect(publish.string("messaging.operation.type") == "publish")
        await kernel.shutdown()
        for await _ in stream {}
    }

    @Test("every resolve is counted only when the host opts in; failed resolves always are")
    func resolves() async throws {
        for counting in [false, true] {
            let metrics = TestMetrics()
            var harness = TestHarness(modules: AppManifest.groups.flatMap { $0.modules })
            harness.host = AppManifest.host
            harness.entitlements = AppManifest.defaultEntitlements
            harness.options.metricsFactory = metrics
            harness.options.countsEveryResolve = counting
            let app = try await harness.start()
            _ = try await app.contents(of: .dashboardWidgets)
            await app.shutdown()
            #expect((metrics.counterTotal(label: "mosaic_service_resolves_total") > 0) == counting)
        }
    }
}

@Suite struct ActivationCauseTests {
    @Test("the report says why each module was activated: boot, a grant, an install, or a dependency")
    func causes() async throws {
        let tracer = InMemoryTracer()
        var options = KernelOptions()
        options.tracer = tracer
        let kernel = makeKernel(
            [
                probe("com.app.base"), probe("com.app.pro", entitlements: ["pro"]),
                probe("com.app.reports", requires: [.module("com.app.pro")]),
            ], options: options)
        let booted = try await kernel.boot()
        #expect(booted["com.app.base"]?.cause == .boot)
        #expect(booted["com.app.pro"]?.cause == nil)
        try await kernel.grant("pro")
        let granted = await kernel.report()
        #expect(granted["com.app.pro"]?.cause == .grant("pro"))
        #expect(granted["com.app.reports"]?.cause == .dependency("com.app.pro"))
        try await kernel.install(probe("com.app.extra"))
        #expect(await kernel.report()["com.app.extra"]?.cause == .install)
        let reports = try #require(
            tracer.finishedSpans.last {
                $0.operationName == "mosaic.module.activate" && $0.string("mosaic.module.id") == "com.app.reports"
            })
        #expect(reports.string("mosaic.cause") == "dependency")
        await kernel.shutdown()
    }
}

@Suite struct ModuleLogMetadataTests {
    @Test("log lines written while a module's code runs carry the module's id")
    func metadata() async throws {
        let seen = EventLog()
        let kernel = makeKernel([
            ModuleFactory(manifest: Manifest(id: "com.app.logs", version: "1.0.0")) {
                Probe(
                    activate: { _ in
                        if Logger.MetadataProvider.mosaicModule.get()["mosaic.module"] == "com.app.logs" {
                            seen.record(.activated("com.app.logs"))
                        }
                    }, deactivate: {})
            }
        ])
        try await kernel.boot()
        #expect(seen.activations == ["com.app.logs"])
        #expect(Logger.MetadataProvider.mosaicModule.get().isEmpty)
        await kernel.shutdown()
    }
}
