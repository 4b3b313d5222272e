import Foundation
import Logging
import Mosaic
import MosaicKernel

/// A module that does nothing, so the benchmark measures the kernel alone.
struct NoOpModule: Module {
    static let manifest = Manifest(id: "bench.noop", version: "1.0.0")
}

/// `count` modules, each depending on up to three earlier ones (a random DAG with a fixed seed).
func syntheticCatalog(count: Int, dependencies: Int = 3) -> ModuleCatalog {
    var random = SplitMix64(seed: 42)
    var catalog = ModuleCatalog()
    for index in 0..<count {
        let targets = index == 0 ? [] : Set((0..<dependencies).map { _ in Int(random.next() % UInt64(index)) })
        let manifest = Manifest(
            id: ModuleID("bench.module.m\(index)"), version: "1.0.0",
            requires: targets.sorted().map { .module(ModuleID("bench.module.m\($0)"), from: "1.0.0") })
        catalog.add(ModuleFactory(manifest: manifest) { NoOpModule() })
    }
    return catalog
}

struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Boot = validate + plan + activate no-op modules, for 1,000 and 10,000 modules.
func runBootBenchmark() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let host = HostEnvironment(version: "1.0.0")
    print("Boot: Kernel(catalog:) + boot(), no-op modules, ~3 dependencies each (release build)\n")
    let widths = [8, 26, 12, 12, 12]
    print(row(["modules", "phase", "min ms", "median ms", "p90 ms"], widths: widths))
    var medians: [Int: Double] = [:]
    for count in [1_000, 10_000] {
        let catalog = syntheticCatalog(count: count)
        let runs = count == 1_000 ? 30 : 10
        let validation = await measure(runs: runs) {
            _ = ModuleGraph(catalog: catalog, host: host)
        }
        let boot = try await measure(runs: runs) {
            let kernel = Kernel(catalog: catalog, host: host, logger: quiet)
            let report = try await kernel.boot()
            precondition(report.count("active") == count, "every module should be active")
        }
        for (phase, samples) in [("validate + plan", validation), ("boot (validate+plan+activate)", boot)] {
            print(
                row(
                    [
                        "\(count)", phase, format(samples.minimum.milliseconds), format(samples.median.milliseconds),
                        format(samples.p90.milliseconds),
                    ], widths: widths))
        }
        medians[count] = boot.median.milliseconds
    }
    if let small = medians[1_000], let large = medians[10_000] {
        print("\nt(10k)/t(1k) = \(format(large / small)) (goal ≤ 11); t(10k) = \(format(large)) ms (goal ≤ 70 ms)")
    }
}

/// Where a boot's time goes, per module count: `Kernel(catalog:)` (validation and the hubs), `boot()` (authorizing
/// and activating), and dropping the booted kernel (every module's grants taken back, its records freed). Medians
/// of 10 runs each, after two warm-ups.
func runBootPhases() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let host = HostEnvironment(version: "1.0.0")
    print(row(["modules", "init ms", "boot() ms", "drop ms", "all ms"], widths: [8, 10, 10, 10, 10]))
    for count in [1_000, 10_000, 20_000] {
        let catalog = syntheticCatalog(count: count)
        var phases: [[Duration]] = [[], [], [], []]
        for run in 0..<12 {
            let start = ContinuousClock.now
            var kernel: Kernel? = Kernel(catalog: catalog, host: host, logger: quiet)
            let made = ContinuousClock.now
            _ = try await kernel?.boot()
            let booted = ContinuousClock.now
            kernel = nil
            let dropped = ContinuousClock.now
            guard run >= 2 else { continue }
            for (phase, duration) in [made - start, booted - made, dropped - booted, dropped - start].enumerated() {
                phases[phase].append(duration)
            }
        }
        let medians = phases.map { format(Samples(durations: $0.sorted()).median.milliseconds) }
        print(row(["\(count)"] + medians, widths: [8, 10, 10, 10, 10]))
    }
}

/// Memory per module, read as the growth of the process's resident memory (`/proc/self/statm`, Linux) after each
/// step: making a catalog of `count` modules, validating it alone, `Kernel(catalog:)`, and `boot()`. Memory freed
/// in between is reused, so each figure is what the step keeps; run one count per process.
func runBootMemory(count: Int) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let host = HostEnvironment(version: "1.0.0")
    var resident = [residentBytes()]
    let catalog = syntheticCatalog(count: count)
    resident.append(residentBytes())
    let graph = ModuleGraph(catalog: catalog, host: host)
    resident.append(residentBytes())
    let kernel = Kernel(catalog: catalog, host: host, logger: quiet)
    resident.append(residentBytes())
    _ = try await kernel.boot()
    resident.append(residentBytes())
    let perModule = zip(resident.dropFirst(), resident).map { ($0 - $1) / count }
    print("modules \(count), bytes per module: catalog \(perModule[0]), ModuleGraph alone \(perModule[1]), ")
    print("  Kernel(catalog:) \(perModule[2]), boot() \(perModule[3])")
    withExtendedLifetime((graph, kernel)) {}
}

/// The process's resident memory in bytes, or 0 when `/proc/self/statm` cannot be read.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    // statm counts pages, whose size is the system's (4 KiB here, 16 or 64 KiB on some ARM systems).
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * sysconf(Int32(_SC_PAGESIZE)) : 0
}
