// swift-tools-version: 6.2
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is whatever the repository was cloned as.
let mosaic = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so the library never depends on benchmark tooling.
// Run: swift run -c release --package-path Benchmarks
let package = Package(
    name: "MosaicBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "MosaicBenchmarks",
            dependencies: [
                .product(name: "Mosaic", package: mosaic),
                .product(name: "MosaicKernel", package: mosaic),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .treatAllWarnings(as: .error)]
        )
    ]
)
