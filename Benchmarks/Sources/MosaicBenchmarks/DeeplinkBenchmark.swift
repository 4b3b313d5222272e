import Logging
@_spi(Hosting) import Mosaic
import MosaicKernel

/// 100 modules × 10 features, each handling `f<module>-<feature>/show`: 1,000 link handlers.
func linkHandlerCatalog() -> ModuleCatalog {
    var catalog = ModuleCatalog()
    for index in 0..<100 {
        catalog.add(
            ModuleFactory(
                manifest: Manifest(id: ModuleID("bench.links.m\(index)"), version: "1.0.0"),
                register: { module in
                    for feature in 0..<10 { module.handle(feature: "f\(index)-\(feature)", action: "show") { _, _ in } }
                }
            ) { NoOpModule() })
    }
    return catalog
}

/// Dispatching a link among 1,000 handlers (100 modules × 10 features): from a parsed link, and from text.
func runDeeplinkBenchmark() async throws {
    let catalog = linkHandlerCatalog()
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(
        catalog: catalog, host: HostEnvironment(version: "1.0.0", schemes: ["ghost"]), logger: quiet)
    try await kernel.boot()
    let text = "ghost://home/f57-3/show?id=42"
    let link = try Deeplink(parsing: text)
    let first = await kernel.open(link)
    guard case .handled = first else { fatalError("the benchmark link must be handled: \(first)") }
    let count = 200_000
    func perLink(_ body: () async -> Void) async -> Double {
        var timings: [Double] = []
        for _ in 0..<7 {
            let start = ContinuousClock.now
            for _ in 0..<count { await body() }
            timings.append(start.duration(to: .now).nanoseconds / Double(count))
        }
        return timings.sorted()[3]
    }
    let dispatch = await perLink { consume(await kernel.open(link)) }
    let parseAndDispatch = await perLink { consume(await kernel.open(text)) }
    let parse = try nanoseconds { consume(try Deeplink(parsing: text)) }
    print("\nDeeplinks: 1,000 handlers, no-op navigator and handler (release build), ns per link")
    print("  dispatch a parsed link:          \(format(dispatch, places: 1))")
    print("  parse + dispatch from text:      \(format(parseAndDispatch, places: 1))")
    print("  parse only:                      \(format(parse, places: 1))")
}
