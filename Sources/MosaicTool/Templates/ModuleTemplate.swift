/// The files of a new module package: an interface target (the service protocol and its typed key), the module
/// target (a module with its manifest that registers the service), a test target on MosaicTesting, and a README.
struct ModuleTemplate {
    /// The module's identifier, such as `com.acme.payments`.
    let id: String
    /// The type-name stem, such as `Payments`.
    let name: String
    /// The Mosaic package: how `Package.swift` names it, and where it is.
    let mosaic: MosaicLocation

    /// The service key's name, such as `payments`.
    var keyName: String { name.prefix(1).lowercased() + name.dropFirst() }

    /// Every file, by its path inside the package.
    var files: [String: String] {
        [
            "Package.swift": packageManifest,
            "Sources/\(name)Interface/\(name)Service.swift": interface,
            "Sources/\(name)Module/\(name)Module.swift": module,
            "Tests/\(name)ModuleTests/\(name)ModuleTests.swift": tests,
            "README.md": readme,
            ".gitignore": ".build/\nPackage.resolved\n",
        ]
    }

    var packageManifest: String {
        """
        // swift-tools-version: 6.2
        import PackageDescription

        let package = Package(
            name: "\(name)",
            platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
            products: [
                .library(name: "\(name)Interface", targets: ["\(name)Interface"]),
                .library(name: "\(name)Module", targets: ["\(name)Module"]),
            ],
            dependencies: [
                // Mosaic by path: \(mosaic.note)
                .package(path: "\(mosaic.path)")
            ],
            targets: [
                .target(
                    name: "\(name)Interface", dependencies: [.product(name: "Mosaic", package: "\(mosaic.identity)")]),
                .target(
                    name: "\(name)Module",
                    dependencies: ["\(name)Interface", .product(name: "Mosaic", package: "\(mosaic.identity)")]),
                .testTarget(
                    name: "\(name)ModuleTests",
                    dependencies: [
                        "\(name)Interface", "\(name)Module", .product(name: "Mosaic", package: "\(mosaic.identity)"),
                        .product(name: "MosaicTesting", package: "\(mosaic.identity)"),
                    ]),
            ]
        )

        """
    }

    var interface: String {
        """
        public import Mosaic

        /// What \(id) offers other modules. Other modules depend on this interface target, never on the module.
        public protocol \(name)Service: Sendable {
            /// Whether the service is ready, in a word.
            func status() -> String
        }

        extension ServiceKey where Value == any \(name)Service {
            /// The \(name.lowercased()) service, as \(id) provides it.
            public static var \(keyName): Self { Self() }
        }

        """
    }

    var module: String {
        """
        public import Mosaic
        internal import \(name)Interface

        /// The \(id) module: its manifest, and what it provides.
        public struct \(name)Module: Module {
            /// Who the module is and what it needs.
            public static let manifest = Manifest(id: "\(id)", version: "0.1.0")

            /// Makes the module; the kernel calls this when it activates it.
            public init() {}

            /// Declares what the module provides; no other code runs before the kernel has checked the graph.
            public static func register(in module: inout ModuleRegistrar) {
                module.services.singleton(.\(keyName)) { Default\(name)Service() }
            }
        }

        /// The service's first implementation.
        struct Default\(name)Service: \(name)Service {
            func status() -> String { "ready" }
        }

        """
    }

    var tests: String {
        """
        import Mosaic
        import MosaicTesting
        import \(name)Interface
        import \(name)Module
        import Testing

        @Suite struct \(name)ModuleTests {
            @Test("the module activates and provides its service")
            func activates() async throws {
                try await TestHarness(\(name)Module.self).run { app in
                    await app.expect("\(id)", .active)
                    let service = try await app.resolve(.\(keyName))
                    #expect(service.status() == "ready")
                }
            }
        }

        """
    }

    var readme: String {
        """
        # \(name)

        The Mosaic module `\(id)`, made by `mosaic new module`.

        - `Sources/\(name)Interface`: `\(name)Service` and its key `ServiceKey.\(keyName)`. Other modules and the host
          depend on this target, never on the module itself.
        - `Sources/\(name)Module`: `\(name)Module`, its manifest (identifier, version, dependencies, entitlements) and
          what it registers.
        - `Tests/\(name)ModuleTests`: the module booted alone in a `TestHarness` (MosaicTesting, Swift Testing).

        Mosaic is a dependency by path (`\(mosaic.path)`); change it in `Package.swift` when the checkout moves.

        ```sh
        swift build
        swift test
        ```

        Add the module to a host by listing `\(name)Module.self` in one of its module groups; then the host's
        `validate`, `graph` and `canvas` commands show it.

        """
    }
}
