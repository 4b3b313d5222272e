// swift-tools-version: 6.2
import PackageDescription

let mosaic: Target.Dependency = .product(name: "Mosaic", package: "Mosaic")

/// libFuzzer entry points for Mosaic's parsers of outside input. A separate package, so the library never depends
/// on fuzzing tooling; `Fuzz/run.sh` builds it with `-sanitize=fuzzer,address` and runs each target.
let package = Package(
    name: "MosaicFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Mosaic", path: "..")],
    targets: [
        .target(name: "LibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["LibFuzzer"]),
        .executableTarget(name: "FuzzDeeplink", dependencies: ["FuzzSupport", mosaic]),
        .executableTarget(name: "FuzzQuery", dependencies: ["FuzzSupport", mosaic]),
        .executableTarget(name: "FuzzVersion", dependencies: ["FuzzSupport", mosaic]),
        .executableTarget(
            name: "FuzzHTML",
            dependencies: ["FuzzSupport", .product(name: "MosaicHummingbird", package: "Mosaic")]),
        .executableTarget(
            name: "FuzzManifest",
            dependencies: ["FuzzSupport", mosaic, .product(name: "MosaicKernel", package: "Mosaic")]),
    ]
)
