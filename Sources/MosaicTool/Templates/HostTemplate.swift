/// The files of a new host package: an executable with the Mosaic commands embedded, its module list, and one
/// example module to start from.
struct HostTemplate {
    /// The package's name, such as `Shop`.
    let name: String
    /// The command's name, such as `shop`.
    var command: String { name.lowercased() }
    /// The Mosaic package: how `Package.swift` names it, and where it is.
    let mosaic: MosaicLocation

    /// Every file, by its path inside the package.
    var files: [String: String] {
        [
            "Package.swift": packageManifest,
            "Sources/\(command)/\(name).swift": entry,
            "Sources/\(command)/AppModules.swift": modules,
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
            dependencies: [
                // Mosaic by path: \(mosaic.note)
                .package(path: "\(mosaic.path)"),
                .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
            ],
            targets: [
                .executableTarget(
                    name: "\(command)",
                    dependencies: [
                        .product(name: "Mosaic", package: "\(mosaic.identity)"),
                        .product(name: "MosaicKernel", package: "\(mosaic.identity)"),
                        .product(name: "MosaicCommands", package: "\(mosaic.identity)"),
                        .product(name: "ArgumentParser", package: "swift-argument-parser"),
                    ])
            ]
        )

        """
    }

    var entry: String {
        """
        import ArgumentParser
        import Mosaic
        import MosaicCommands
        import MosaicKernel

        /// `\(command)`: boots the modules (`boot`, the default), or checks, draws and documents them.
        @main
        struct \(name): AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "The \(name) host.",
                discussion: "Exit codes: 0 success, 1 diagnostics with errors or a link not handled, 2 a usage error.",
                subcommands: [Boot.self] + MosaicCommands.all(for: \(name)Host.self), defaultSubcommand: Boot.self)

            /// The entry: swift-argument-parser's, except that a usage error exits 2.
            static func main() async { await MosaicCommands.main(\(name).self) }
        }

        /// The host as the kernel and the commands see it.
        enum \(name)Host: CommandableHost {
            static var commandHost: CommandHost {
                CommandHost(
                    catalog: ModuleCatalog(groups: [AppModules.self]),
                    environment: HostEnvironment(version: "0.1.0", schemes: ["\(command)"]))
            }
        }

        /// `\(command) boot`: boots the modules, prints the report, and shuts them down.
        struct Boot: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Boot the modules and print the report.")

            func run() async throws {
                let host = \(name)Host.commandHost
                let kernel = Kernel(
                    catalog: host.catalog, host: host.environment, entitlements: .granted(host.entitlements),
                    extensionPoints: host.extensionPoints, options: host.options)
                print(try await kernel.boot().table)
                await kernel.shutdown()
            }
        }

        """
    }

    var modules: String {
        """
        import Mosaic

        /// Every module this host runs: add a module package's module type here.
        enum AppModules: ModuleGroup {
            static let modules: [any Module.Type] = [HelloModule.self]
        }

        /// An example module: replace it with your own (`mosaic new module com.example.feature`).
        struct HelloModule: Module {
            static let manifest = Manifest(id: "\(command).hello", version: "0.1.0")
        }

        """
    }

    var readme: String {
        """
        # \(name)

        A Mosaic host, made by `mosaic new host`. Its modules are listed in `Sources/\(command)/AppModules.swift`.

        ```sh
        swift run \(command)             # boot the modules and print the report
        swift run \(command) validate    # check the module graph (exit 1 on errors)
        swift run \(command) graph       # the module graph as Graphviz DOT (--format mermaid or svg)
        swift run \(command) modules     # the modules in activation order
        swift run \(command) canvas      # what each module provides and needs
        ```

        Mosaic is a dependency by path (`\(mosaic.path)`); change it in `Package.swift` when the checkout moves.

        """
    }
}
