// Mosaic's benchmarks. Run from the repository root:
//   swift run -c release --package-path Benchmarks
// `MosaicBenchmarks profile-validation` runs only validation, for a profiler.
import Mosaic
import MosaicKernel

if CommandLine.arguments.dropFirst().first == "profile-validation" {
    let catalog = syntheticCatalog(count: 2_000)
    for _ in 0..<3 { _ = ModuleGraph(catalog: catalog, host: HostEnvironment(version: "1.0.0")) }
} else if CommandLine.arguments.dropFirst().first == "profile-boot" {
    let catalog = syntheticCatalog(count: 2_000)
    for _ in 0..<3 {
        _ = try await Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0")).boot()
    }
} else {
    try await runBootBenchmark()
}
