import ArgumentParser
import Foundation
import GhostApp
import Logging
import Mosaic
import MosaicCommands
import MosaicHummingbird
import MosaicKernel

/// `swift run ghost`: serves the app (`serve`, the default), or checks, draws and documents its modules.
@main
struct Ghost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The Ghost example app: Mosaic modules served as a web app.",
        subcommands: [Serve.self] + MosaicCommands.all(for: GhostHost.self), defaultSubcommand: Serve.self)
}

/// Ghost as the Mosaic commands see it: the catalog and host it serves.
enum GhostHost: CommandableHost {
    static var commandHost: CommandHost {
        CommandHost(
            catalog: ModuleCatalog(groups: AppManifest.groups), environment: AppManifest.host,
            entitlements: AppManifest.defaultEntitlements, extensionPoints: WebHost.extensionPoints)
    }
}

/// `ghost serve`: boots the Ghost modules, prints the boot report, and serves the app until Ctrl-C.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Boot the modules and serve the app (the default command).")

    @Option(help: "The port to listen on (0: any free port).")
    var port = 8080

    @Option(help: "The address to listen on. Loopback by default; 0.0.0.0 serves every interface.")
    var bind = "127.0.0.1"

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp(
            "Another host name the app answers to (besides localhost, 127.0.0.1 and [::1]); repeat for more.",
            discussion: "Requests naming any other host are refused (421), which stops DNS rebinding. Serving on "
                + "a network (--bind 0.0.0.0), add the names or addresses clients use."))
    var allowedHosts: [String] = []

    @Option(help: "Seconds a connection may send nothing before it is closed.")
    var idleTimeout = 30

    @Option(help: "Where Ghost keeps its state (an SQLite database); created when missing.")
    var dataDirectory = ".ghost-data"

    @Option(
        name: .customLong("grant"), help: "An entitlement to grant; repeat for more (default: weather, sports, art).")
    var grants: [String] = []

    @Flag(help: "Boot, print the report, shut down and exit, without serving.")
    var check = false

    func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535, not \(port).")
        }
        guard idleTimeout > 0 else {
            throw ValidationError("--idle-timeout must be a positive number of seconds, not \(idleTimeout).")
        }
        for name in allowedHosts where name.isEmpty || name.contains(where: { $0 == "/" || $0 == " " }) {
            throw ValidationError("--allow-host takes a host name or address without a scheme or path, not “\(name)”.")
        }
        for grant in grants {
            if let problem = Entitlement(grant).problem { throw ValidationError("--grant \(grant): \(problem)") }
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ValidationError(
                "Cannot use \(dataDirectory) as the data directory (\(error)); pass --data-directory.")
        }
        let catalog = ModuleCatalog(groups: AppManifest.groups)
        let granted: Set<Entitlement> =
            grants.isEmpty ? AppManifest.defaultEntitlements : Set(grants.map { Entitlement($0) })
        let kernel = Kernel(
            catalog: catalog, host: AppManifest.host, entitlements: .granted(granted),
            extensionPoints: WebHost.extensionPoints,
            options: KernelOptions(
                deeplinkRules: DeeplinkRules(allowedSchemes: [AppManifest.scheme]), stateDirectory: dataDirectory))
        print(try await kernel.boot().table)
        if check {
            await kernel.shutdown()
            return
        }
        let options = WebHostOptions(
            allowedHosts: WebHostOptions.loopbackHosts.union(allowedHosts), idleTimeout: .seconds(idleTimeout))
        let host = WebHost(
            kernel: kernel, catalog: catalog, scheme: AppManifest.scheme, title: "Ghost", options: options,
            logger: Logger(label: "ghost.web"))
        try await WebServer.run(host, address: bind, port: port, logger: Logger(label: "ghost")) { port in
            print("\nGhost is running at http://\(bind):\(port)/ — Ctrl-C stops it.")
        }
        print("Ghost stopped: server closed, requests finished, modules deactivated.")
    }
}
