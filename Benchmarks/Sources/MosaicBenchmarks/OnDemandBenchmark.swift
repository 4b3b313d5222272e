import Foundation
import Logging
import Mosaic
import MosaicKernel

/// The services of Ghost-shaped apps' ten core modules: one type per core module, each told apart by its tag.
protocol CoreTag: Sendable {}
enum Core0: CoreTag {}
enum Core1: CoreTag {}
enum Core2: CoreTag {}
enum Core3: CoreTag {}
enum Core4: CoreTag {}
enum Core5: CoreTag {}
enum Core6: CoreTag {}
enum Core7: CoreTag {}
enum Core8: CoreTag {}
enum Core9: CoreTag {}

/// What a core module provides: its sample data, decoded when the service is first built.
struct CoreData<Tag: CoreTag>: Sendable {
    let entries: [String: Int]
}

/// Sample data a module decodes as it starts, as Ghost's modules decode theirs.
let sampleJSON = Data(
    ("{" + (0..<40).map { "\"entry \($0)\": \($0 * 7)" }.joined(separator: ", ") + "}").utf8)

/// A Ghost-shaped module: it reads its sample data as it starts.
struct SampleModule: Module {
    static let manifest = Manifest(id: "bench.app.sample", version: "1.0.0")

    func activate(_ context: ActivationContext) async throws {
        _ = try JSONDecoder().decode([String: Int].self, from: sampleJSON)
    }
}

/// `count` modules shaped like Ghost's: ten core modules, each providing a service (its data), and feature modules,
/// each with a tab, a dashboard widget built from a core service, and links it handles; the last `onDemand` of
/// them start on demand. Every module decodes its sample data as it starts.
func ghostShapedCatalog(count: Int, onDemand: Int) -> ModuleCatalog {
    var catalog = ModuleCatalog()
    for index in 0..<count {
        let isOnDemand = index >= count - onDemand
        let manifest = Manifest(id: ModuleID("bench.app.m\(index)"), version: "1.0.0")
        catalog.add(
            ModuleFactory(
                manifest: manifest,
                register: { module in
                    if isOnDemand { module.activation = .onDemand }
                    register(index, in: &module)
                }
            ) { SampleModule() })
    }
    return catalog
}

/// Registers module `index`: core module `index` below ten, else a feature using core `index % 10`.
private func register(_ index: Int, in module: inout ModuleRegistrar) {
    switch index % 10 {
    case 0: register(index, Core0.self, in: &module)
    case 1: register(index, Core1.self, in: &module)
    case 2: register(index, Core2.self, in: &module)
    case 3: register(index, Core3.self, in: &module)
    case 4: register(index, Core4.self, in: &module)
    case 5: register(index, Core5.self, in: &module)
    case 6: register(index, Core6.self, in: &module)
    case 7: register(index, Core7.self, in: &module)
    case 8: register(index, Core8.self, in: &module)
    default: register(index, Core9.self, in: &module)
    }
}

private func register<Tag: CoreTag>(_ index: Int, _: Tag.Type, in module: inout ModuleRegistrar) {
    if index < 10 {
        register(core: Tag.self, in: &module)
    } else {
        register(feature: index, core: Tag.self, in: &module)
    }
}

private func register<Tag: CoreTag>(core _: Tag.Type, in module: inout ModuleRegistrar) {
    module.services.singleton(ServiceKey(CoreData<Tag>.self)) {
        CoreData<Tag>(entries: try JSONDecoder().decode([String: Int].self, from: sampleJSON))
    }
}

private func register<Tag: CoreTag>(feature index: Int, core _: Tag.Type, in module: inout ModuleRegistrar) {
    module.tab("tab\(index)", title: "Feature \(index)")
    module.contribute(to: .dashboardWidgets, id: "widget\(index)", title: "Feature \(index)") {
        (data: CoreData<Tag>) in Panel(.text("\(data.entries.count) entries"))
    }
    module.handle(feature: "feature\(index)") { _, _ in }
}

/// Boot of an app of 100 Ghost-shaped modules, 90 of them on demand, against all 100 started at boot
/// (`Kernel(catalog:)` to the boot report, alternating, medians of 30 each), then the first link to a module not
/// started yet against the same link once it runs.
func runOnDemandBenchmark() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let host = HostEnvironment(version: "1.0.0", schemes: ["bench"])
    let lazy = ghostShapedCatalog(count: 100, onDemand: 90)
    let eager = ghostShapedCatalog(count: 100, onDemand: 0)
    func boot(_ catalog: ModuleCatalog) async throws -> (Duration, Kernel) {
        let start = ContinuousClock.now
        let kernel = Kernel(catalog: catalog, host: host, logger: quiet)
        let report = try await kernel.boot()
        let took = start.duration(to: .now)
        precondition(report.isClean, report.table)
        return (took, kernel)
    }
    var times: (lazy: [Duration], eager: [Duration]) = ([], [])
    for run in 0..<32 {
        let (lazyTime, lazyKernel) = try await boot(lazy)
        let (eagerTime, eagerKernel) = try await boot(eager)
        await lazyKernel.shutdown()
        await eagerKernel.shutdown()
        guard run >= 2 else { continue }
        times.lazy.append(lazyTime)
        times.eager.append(eagerTime)
    }
    let lazyBoot = Samples(durations: times.lazy.sorted())
    let eagerBoot = Samples(durations: times.eager.sorted())
    print("On demand: 100 Ghost-shaped modules, Kernel(catalog:) to the boot report, medians of 30 alternating runs\n")
    let widths = [34, 12, 12]
    print(row(["", "median ms", "p90 ms"], widths: widths))
    for (name, samples) in [("90 on demand (10 start at boot)", lazyBoot), ("all 100 at boot", eagerBoot)] {
        print(row([name, format(samples.median.milliseconds), format(samples.p90.milliseconds)], widths: widths))
    }
    print(
        "\nratio on demand / all at boot: \(format(lazyBoot.median.milliseconds / eagerBoot.median.milliseconds)) "
            + "(goal ≤ 0.25)")

    // The first link to a module on standby starts it; the second finds it running.
    var links: (first: [Duration], later: [Duration]) = ([], [])
    for run in 0..<32 {
        let (_, kernel) = try await boot(lazy)
        var took: [Duration] = []
        for _ in 0..<2 {
            let start = ContinuousClock.now
            let result = await kernel.open("bench://dashboard/feature95")
            took.append(start.duration(to: .now))
            guard case .handled = result else { preconditionFailure("the link was not handled: \(result)") }
        }
        await kernel.shutdown()
        guard run >= 2 else { continue }
        links.first.append(took[0])
        links.later.append(took[1])
    }
    let first = Samples(durations: links.first.sorted())
    let later = Samples(durations: links.later.sorted())
    print(
        "\nfirst link to a module on standby: median \(format(first.median.milliseconds * 1_000)) µs, "
            + "the same link once it runs: \(format(later.median.milliseconds * 1_000)) µs "
            + "(extra \(format((first.median - later.median).milliseconds * 1_000)) µs)")
}

/// Boots the 100-module app `times` times, `onDemand` of them on demand, and prints nothing: for counting
/// instructions with callgrind (`callgrind.sh on-demand`).
func profileOnDemandBoot(onDemand: Int, times: Int) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let host = HostEnvironment(version: "1.0.0", schemes: ["bench"])
    let catalog = ghostShapedCatalog(count: 100, onDemand: onDemand)
    for _ in 0..<times {
        let kernel = Kernel(catalog: catalog, host: host, logger: quiet)
        _ = try await kernel.boot()
        await kernel.shutdown()
    }
}
