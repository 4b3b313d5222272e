import CoreMetrics
import InMemoryTracing
import Logging
@_spi(Hosting) import Mosaic
import MosaicKernel
import Prometheus
import Tracing

/// What spans and metrics cost the hot paths: a singleton resolve and a deeplink dispatch, with no backend (the
/// globals, never bootstrapped), with no-op backends, and with real ones (a Prometheus registry and an in-memory
/// tracer), plus counting every resolve. Medians of 7 runs; the range is the fastest and slowest run.
func runOperationsBenchmark() async throws {
    let setups: [(String, @Sendable (inout KernelOptions) -> Void)] = [
        ("none (globals, not bootstrapped)", { _ in }),
        (
            "no-op metrics + no-op tracer",
            { options in
                options.metricsFactory = NOOPMetricsHandler.instance
                options.tracer = NoOpTracer()
            }
        ),
        (
            "Prometheus + in-memory tracer",
            { options in
                options.metricsFactory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
                options.tracer = InMemoryTracer()
            }
        ),
        (
            "Prometheus + tracer + every resolve",
            { options in
                options.metricsFactory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
                options.tracer = InMemoryTracer()
                options.countsEveryResolve = true
            }
        ),
    ]
    print("\nOperations: ns per operation, median [min–max] of 7 runs (release build)")
    let widths = [38, 24, 24]
    print(row(["backends", "resolve singleton", "deeplink dispatch"], widths: widths))
    for (name, configure) in setups {
        var options = KernelOptions()
        configure(&options)
        let (owner, services) = try await operationsServices(options)
        let resolve = try spread(count: 1_000_000) { consume(try services.resolve(.shared)) }
        await owner.shutdown()
        let (kernel, link) = try await operationsKernel(options)
        let tracer = options.tracer as? InMemoryTracer
        let clear: () -> Void = { tracer?.clearAll() }
        let dispatch = await spreadAsync(count: 20_000, between: clear) { consume(await kernel.open(link)) }
        await kernel.shutdown()
        print(row([name, resolve.text, dispatch.text], widths: widths))
    }
}

/// A median and range in ns.
struct Spread {
    let values: [Double]
    var text: String {
        "\(format(values[values.count / 2], places: 1)) [\(format(values[0], places: 1))–"
            + "\(format(values[values.count - 1], places: 1))]"
    }
}

func spread(count: Int, runs: Int = 7, _ operation: () throws -> Void) rethrows -> Spread {
    var timings: [Double] = []
    for _ in 0..<(runs + 1) {
        let start = ContinuousClock.now
        for _ in 0..<count { try operation() }
        timings.append(start.duration(to: .now).nanoseconds / Double(count))
    }
    return Spread(values: timings.dropFirst().sorted())
}

func spreadAsync(
    count: Int, runs: Int = 7, between: () -> Void, _ operation: () async -> Void
) async -> Spread {
    var timings: [Double] = []
    for _ in 0..<(runs + 1) {
        between()
        let start = ContinuousClock.now
        for _ in 0..<count { await operation() }
        timings.append(start.duration(to: .now).nanoseconds / Double(count))
    }
    return Spread(values: timings.dropFirst().sorted())
}

/// A booted kernel with one singleton service, and the host's view of its services (valid while it runs).
func operationsServices(_ options: KernelOptions) async throws -> (Kernel, Services) {
    var catalog = ModuleCatalog()
    catalog.add(
        ModuleFactory(
            manifest: Manifest(id: "bench.services", version: "1.0.0"),
            register: { module in module.services.singleton(.shared) { SharedImpl() } }
        ) { NoOpModule() })
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), options: options, logger: quiet)
    try await kernel.boot()
    return (kernel, await kernel.services)
}

func operationsKernel(_ options: KernelOptions) async throws -> (Kernel, Deeplink) {
    let catalog = linkHandlerCatalog()
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(
        catalog: catalog, host: HostEnvironment(version: "1.0.0", schemes: ["ghost"]), options: options, logger: quiet)
    try await kernel.boot()
    let link = try Deeplink(parsing: "ghost://home/f57-3/show?id=42")
    let result = await kernel.open(link)
    guard case .handled = result else { fatalError("the benchmark link must be handled: \(result)") }
    return (kernel, link)
}
