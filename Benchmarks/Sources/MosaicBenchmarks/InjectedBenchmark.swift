import Logging
import Mosaic
import MosaicKernel
import Synchronization

/// The module whose `@Injected` property the benchmark reads; it hands itself out when activated.
struct InjectingModule: Module {
    static let manifest = Manifest(id: "bench.injecting", version: "1.0.0")
    static let activated = Mutex<InjectingModule?>(nil)
    @Injected(.shared) var shared

    static func register(in module: inout ModuleRegistrar) {
        module.services.singleton(.shared) { SharedImpl() }
    }

    func activate(_ context: ActivationContext) async throws {
        Self.activated.withLock { $0 = self }
    }
}

/// Nanoseconds per read of a singleton: through the module's `@Injected` property and through `resolve`, from the
/// same module's services; seven runs of 200,000 reads each, median and range.
func runInjectedBenchmark() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    var catalog = ModuleCatalog()
    catalog.add(ModuleFactory(InjectingModule.self))
    let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quiet)
    try await kernel.boot()
    guard let module = InjectingModule.activated.withLock({ $0 }),
        let services = await kernel.services(for: "bench.injecting")
    else { fatalError("the benchmark module did not activate") }
    func runs(_ operation: () throws -> Void) rethrows -> [Double] {
        try (0..<7).map { _ in try nanoseconds(runs: 1, operation) }.sorted()
    }
    let injected = try runs { consume(try module.shared()) }
    let resolved = try runs { consume(try services.resolve(.shared)) }
    for (name, values) in [("@Injected read", injected), ("resolve", resolved)] {
        print("\(name): median \(format(values[3])) ns, range \(format(values[0]))–\(format(values[6])) ns")
    }
    print("ratio of medians: \(format(injected[3] / resolved[3]))")
    if CommandLine.arguments.contains("--loop-injected") {
        for _ in 0..<50_000_000 { consume(try module.shared()) }
    }
    await kernel.shutdown()
}
