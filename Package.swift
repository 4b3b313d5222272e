// swift-tools-version: 6.2
import PackageDescription

/// Settings every target of ours shares: Swift 6 mode comes from the tools version; these add the house rules.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Mosaic",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Mosaic", targets: ["Mosaic"]),
        .library(name: "MosaicKernel", targets: ["MosaicKernel"]),
        .library(name: "MosaicTesting", targets: ["MosaicTesting"]),
        .executable(name: "ghost", targets: ["ghost"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/mxcl/Version.git", from: "2.2.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        .target(
            name: "Mosaic",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Version", package: "Version"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicKernel",
            dependencies: [
                "Mosaic",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Version", package: "Version"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicTesting",
            dependencies: ["Mosaic", "MosaicKernel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "GhostApp",
            dependencies: ["Mosaic", "MosaicKernel", .product(name: "Logging", package: "swift-log")],
            path: "Examples/Ghost/Sources/GhostApp",
            resources: [.copy("Data/Samples")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ghost",
            dependencies: ["GhostApp", "Mosaic", "MosaicKernel", .product(name: "Logging", package: "swift-log")],
            path: "Examples/Ghost/Sources/ghost",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "state-writer",
            dependencies: ["Mosaic", "MosaicKernel", .product(name: "Logging", package: "swift-log")],
            path: "Tests/StateWriter",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MosaicTests",
            dependencies: ["Mosaic"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MosaicKernelTests",
            dependencies: [
                "Mosaic",
                "MosaicKernel",
                "GhostApp",
                "state-writer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MosaicTestingTests",
            dependencies: ["Mosaic", "MosaicKernel", "MosaicTesting", "GhostApp"],
            swiftSettings: strictSettings
        ),
    ]
)
