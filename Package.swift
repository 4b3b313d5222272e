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
    // The first releases with `Synchronization.Mutex` and `Atomic`, which Mosaic and the kernel are built on.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Mosaic", targets: ["Mosaic"]),
        .library(name: "MosaicKernel", targets: ["MosaicKernel"]),
        .library(name: "MosaicTesting", targets: ["MosaicTesting"]),
        .library(name: "MosaicWeb", targets: ["MosaicWeb"]),
        .library(name: "MosaicHummingbird", targets: ["MosaicHummingbird"]),
        .library(name: "MosaicCommands", targets: ["MosaicCommands"]),
        .library(name: "MosaicPostgres", targets: ["MosaicPostgres"]),
        .executable(name: "ghost", targets: ["ghost"]),
        .executable(name: "mosaic", targets: ["mosaic"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // `swift package generate-documentation`: a command plugin, never built into a package that depends on Mosaic.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(
            url: "https://github.com/apple/swift-configuration.git", from: "1.4.0",
            traits: [.defaults, "CommandLineArguments", "Reloading"]),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
    ],
    targets: [
        // Per-thread read records for lock-free service reads (C: Swift has no thread-local variables).
        .target(name: "CMosaicReaders"),
        .target(
            name: "Mosaic",
            dependencies: [
                "CMosaicReaders",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicKernel",
            dependencies: [
                "Mosaic",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicTesting",
            dependencies: ["Mosaic", "MosaicKernel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicWeb",
            dependencies: ["Mosaic"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicHummingbird",
            dependencies: [
                "Mosaic", "MosaicKernel", "MosaicWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // Shared state, durable events and the entitlement policy in PostgreSQL, for several instances of one app.
        .target(
            name: "MosaicPostgres",
            dependencies: [
                "Mosaic", "MosaicKernel",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MosaicCommands",
            dependencies: [
                "Mosaic", "MosaicKernel", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // `mosaic`'s commands: manifest files checked against each other, module and host packages scaffolded.
        .target(
            name: "MosaicTool",
            dependencies: [
                "Mosaic", "MosaicKernel", "MosaicCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "mosaic",
            dependencies: ["MosaicCommands", "MosaicTool"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "GhostApp",
            dependencies: ["Mosaic", "MosaicKernel", "MosaicWeb", .product(name: "Logging", package: "swift-log")],
            path: "Examples/Ghost/Sources/GhostApp",
            resources: [.copy("Data/Samples")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ghost",
            dependencies: [
                "GhostApp", "Mosaic", "MosaicKernel", "MosaicHummingbird", "MosaicCommands", "MosaicPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Examples/Ghost/Sources/ghost",
            swiftSettings: strictSettings
        ),
        // Modules that trap at chosen places, which the isolation tests run in processes of their own.
        .target(
            name: "IsolationFixtures",
            dependencies: ["Mosaic", "MosaicKernel", "MosaicWeb"],
            path: "Tests/IsolationFixtures",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "state-writer",
            dependencies: [
                "Mosaic", "MosaicKernel", "IsolationFixtures", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/StateWriter",
            swiftSettings: strictSettings
        ),
        // The instance Scripts/crash-points.py kills at each boundary of a commit, then checks in the database.
        .executableTarget(
            name: "crash-points",
            dependencies: [
                "Mosaic", "MosaicKernel", "MosaicPostgres", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CrashPoints",
            swiftSettings: strictSettings
        ),
        // Sets how many test cases run at once (Tests/TestRunnerWidth/width.c says why); every test target links it.
        .target(name: "TestRunnerWidth", path: "Tests/TestRunnerWidth"),
        .testTarget(
            name: "MosaicTests",
            dependencies: ["Mosaic", "TestRunnerWidth"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MosaicKernelTests",
            dependencies: [
                "TestRunnerWidth",
                "Mosaic",
                "MosaicKernel",
                "MosaicTesting",
                "GhostApp",
                "state-writer",
                "IsolationFixtures",
                "MosaicWeb",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MosaicPostgresTests",
            dependencies: [
                "TestRunnerWidth",
                "Mosaic", "MosaicKernel", "MosaicPostgres", "MosaicTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MosaicTestingTests",
            dependencies: [
                "TestRunnerWidth",
                "Mosaic", "MosaicKernel", "MosaicTesting", "MosaicWeb", "MosaicHummingbird", "GhostApp",
                "MosaicCommands", "MosaicTool", "ghost", "mosaic", "state-writer", "IsolationFixtures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
