import ArgumentParser
import Configuration
import Foundation
import GhostApp
import Logging
import Metrics
import Mosaic
import MosaicCommands
import MosaicHummingbird
import MosaicKernel
import MosaicPostgres
import Prometheus

/// `swift run ghost`: serves the app (`serve`, the default), or checks, draws, documents and drives its modules.
@main
struct Ghost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The Ghost example app: Mosaic modules served as a web app.",
        discussion: "Exit codes: 0 success, 1 diagnostics with errors or a link not handled, 2 a usage error.",
        subcommands: [Serve.self, Bisect.self] + MosaicCommands.all(for: GhostHost.self), defaultSubcommand: Serve.self)

    /// The entry: swift-argument-parser's, except that a usage error exits 2.
    static func main() async {
        // Started by the kernel to run an isolated module: serve it, not the app.
        if let status = await IsolatedModuleProcess.serveIfAsked(ModuleCatalog(groups: AppManifest.groups)) {
            Foundation.exit(status)
        }
        await MosaicCommands.main(Ghost.self)
    }
}

/// Ghost as the Mosaic commands see it: the catalog and host it serves. Commands that boot (`graph --boot`,
/// `open`) keep shared state in memory, never in the data directory.
enum GhostHost: CommandableHost {
    static var commandHost: CommandHost {
        var options = KernelOptions(deeplinkRules: DeeplinkRules(allowedSchemes: [AppManifest.scheme]))
        // `validate` checks configuration keys against the one source `serve` reads that the commands have too
        // (`--set` and `--config` are serve's).
        options.configurationProviders = [EnvironmentVariablesProvider()]
        return CommandHost(
            catalog: ModuleCatalog(groups: AppManifest.groups), environment: AppManifest.host,
            entitlements: AppManifest.defaultEntitlements, extensionPoints: WebHost.extensionPoints, options: options)
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

    @Option(
        help: ArgumentHelp(
            "A file holding the operator key, which granting, revoking and resubmitting need.",
            discussion: "Without it, Ghost makes a key at start and prints the URL that signs an operator in with it "
                + "(as a notebook server prints its token URL). However the app is reached, even through a proxy on "
                + "this machine, changes need the key: in the Settings form's Operator key field, the cookie that "
                + "URL sets, or Authorization: Bearer. 32 to 256 letters, digits or -._~+/= (openssl rand -hex 32 "
                + "makes one); a file keeps it out of the process list."))
    var operatorKeyFile: String?

    @Flag(
        help: ArgumentHelp(
            "Unsafe, for development only: let any program on this machine change the app without a key.",
            discussion: "Applies to requests to a loopback address that came through no proxy (no Forwarded or "
                + "X-Forwarded-* field)."))
    var unsafeNoOperatorKey = false

    @Option(help: "Seconds a connection may send nothing before it is closed.")
    var idleTimeLimit = 30

    @Option(
        help: ArgumentHelp(
            "Seconds a state write or a durable publish may wait for its storage before it fails.",
            discussion: "A page whose change could not be stored in time answers 503 with Retry-After; reads and "
                + "other pages go on meanwhile."))
    var storageTimeLimit = 5

    @Option(help: "Where Ghost keeps its state (an SQLite database); created when missing.")
    var dataDirectory = ".ghost-data"

    @Option(
        name: .customLong("database-url"),
        help: ArgumentHelp(
            "A PostgreSQL database to share state and entitlements with other instances (postgres://user@host/db).",
            discussion: "Also read from DATABASE_URL. Without either, the state stays in --data-directory (SQLite) and "
                + "the entitlements in this process. Every instance given the same database sees the others' state "
                + "and grants within a second; the tables are created on the first start."))
    var databaseURL: String?

    @Option(
        name: .customLong("grant"), help: "An entitlement to grant; repeat for more (default: weather, sports, art).")
    var grants: [String] = []

    @Option(
        help: ArgumentHelp(
            "Also serve /health/live, /health/ready and /metrics on this port (on loopback).",
            discussion: "The admin server keeps answering (503) while the modules deactivate at shutdown."))
    var adminPort: Int?

    @Option(
        help: ArgumentHelp(
            "A JSON file of module configuration, such as {\"com\": {\"ghost\": {\"weather\": {\"units\": \"metric\"}}}}.",
            discussion: "Modules read keys under their identifier. The environment (COM_GHOST_WEATHER_UNITS) and "
                + "--set override the file. Ghost checks the file for changes every --config-poll-seconds seconds "
                + "and on SIGHUP (kill -HUP <pid>), and hands new values to the modules that observe them; a "
                + "malformed new value is reported and the module keeps the last good one."))
    var configFile: String?

    @Option(help: "How often, in seconds, Ghost checks --config-file for changes.")
    var configPollSeconds = 15

    @Option(
        name: .customLong("set"),
        help: "A module configuration value as key=value (com.ghost.weather.units=metric); repeat for more.")
    var settings: [String] = []

    @Option(
        name: .customLong("isolate"),
        help: ArgumentHelp(
            "A module to run in a process of its own; repeat for more (default: com.ghost.art).",
            discussion: "A trap in an isolated module ends its process, never the app; the module restarts. "
                + "--isolate none runs every module in Ghost's process."))
    var isolated: [String] = ["com.ghost.art"]

    @Flag(help: "Boot, print the report, shut down and exit, without serving.")
    var check = false

    func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535, not \(port).")
        }
        if let adminPort, !(0...65_535).contains(adminPort) || adminPort == port {
            throw ValidationError("--admin-port must be between 0 and 65535 and differ from --port, not \(adminPort).")
        }
        guard idleTimeLimit > 0 else {
            throw ValidationError("--idle-time-limit must be a positive number of seconds, not \(idleTimeLimit).")
        }
        guard storageTimeLimit > 0 else {
            throw ValidationError(
                "--storage-time-limit must be a positive number of seconds, not \(storageTimeLimit).")
        }
        for name in allowedHosts where name.isEmpty || name.contains(where: { $0 == "/" || $0 == " " }) {
            throw ValidationError("--allow-host takes a host name or address without a scheme or path, not “\(name)”.")
        }
        for setting in settings where !setting.contains("=") || setting.hasPrefix("=") {
            throw ValidationError("--set takes key=value, such as com.ghost.weather.units=metric, not “\(setting)”.")
        }
        for grant in grants {
            if let problem = Entitlement(grant).problem { throw ValidationError("--grant \(grant): \(problem)") }
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap(
            { label, metadataProvider in
                var handler = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider)
                handler.logLevel = .warning
                return handler
            }, metadataProvider: .mosaicModule)
        // The host owns the metrics backend: Mosaic reports through swift-metrics, and Ghost serves the registry's
        // text at /metrics.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ValidationError(
                "Cannot use \(dataDirectory) as the data directory (\(error)); pass --data-directory.")
        }
        let catalog = ModuleCatalog(groups: AppManifest.groups)
        let known = catalog.entries.map(\.manifest.id.rawValue)
        for name in isolated where name != "none" && !known.contains(name) {
            throw ValidationError(
                "--isolate names \(name), which is none of Ghost's modules: \(known.joined(separator: ", ")), or none.")
        }
        var configuration = KernelOptions(
            deeplinkRules: DeeplinkRules(allowedSchemes: [AppManifest.scheme]), stateDirectory: dataDirectory,
            storageTimeLimit: .seconds(storageTimeLimit))
        let database = try await sharedDatabase()
        configuration.externalStorage = database?.storage
        // Art runs in a process of its own unless --isolate says otherwise: a trap in it ends that process, never
        // the app.
        configuration.isolation.modules = Set(isolated.filter { $0 != "none" }.map { ModuleID(rawValue: $0) })
        // A delivery an instance claimed before it was killed comes back when its claim's lease runs out: a lease
        // of seconds, not two minutes, brings it back soon (a handler takes milliseconds, or as long as storage may).
        let handlerLimit = Duration.seconds(storageTimeLimit + 1)
        configuration.durableEvents = DurableEventOptions(handlerTimeLimit: handlerLimit, claimLease: handlerLimit * 3)
        let (providers, reloadingFile) = try await configurationProviders()
        configuration.configurationProviders = providers
        let granted: Set<Entitlement> =
            grants.isEmpty ? AppManifest.defaultEntitlements : Set(grants.map { Entitlement($0) })
        let kernel = Kernel(
            catalog: catalog, host: AppManifest.host, entitlements: .granted(granted),
            extensionPoints: WebHost.extensionPoints, options: configuration)
        if check {
            print(try await kernel.boot().table)
            await kernel.shutdown()
            await database?.close()
            return
        }
        let given = try operatorKey()
        // Without a key given (and unless the unsafe flag is set), a fresh one, printed once with the URL to use it.
        let key = given ?? (unsafeNoOperatorKey ? nil : OperatorKey.random())
        var options = WebHostOptions(
            allowedHosts: WebHostOptions.loopbackHosts.union(allowedHosts), idleTimeLimit: .seconds(idleTimeLimit),
            operatorKey: key)
        options.unsafeChangesWithoutKeyOnLoopback = unsafeNoOperatorKey
        let host = WebHost(
            kernel: kernel, catalog: catalog, scheme: AppManifest.scheme, title: "Ghost", options: options,
            logger: Logger(label: "ghost.web"),
            operations: OperationsOptions(metrics: { registry.emitToString() }))
        // The file provider checks the file on each poll tick and on SIGHUP; the kernel reloads on its new values.
        let polling = Task { try? await reloadingFile?.run() }
        defer { polling.cancel() }
        // The server boots the kernel, so that /health/ready answers 503 until boot has finished.
        try await WebServer.run(
            host, address: bind, port: port, admin: adminPort.map { AdminAddress(port: $0) },
            logger: Logger(label: "ghost"),
            onRunning: { port in
                print("\nGhost is running at http://\(bind):\(port)/ — Ctrl-C stops it.")
                if given == nil, let key {
                    print(
                        "To change it (Settings: grant, revoke), open http://\(bind):\(port)/operator?key=\(key.secret)"
                    )
                }
            },
            onBooted: { print($0.table) })
        // A stopped database holds up a SIGTERM no longer than a request.
        await database?.close(within: .seconds(storageTimeLimit))
        print("Ghost stopped: server closed, requests finished, modules deactivated.")
    }

    /// The key in `--operator-key-file`, without surrounding whitespace, or `nil` without the option.
    func operatorKey() throws -> OperatorKey? {
        guard let operatorKeyFile else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: operatorKeyFile, encoding: .utf8)
        } catch {
            throw ValidationError(
                "--operator-key-file \(operatorKeyFile) cannot be read (\(error)); name a readable file.")
        }
        do {
            return try OperatorKey(text.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw ValidationError("--operator-key-file \(operatorKeyFile): \(error)")
        }
    }

    /// The PostgreSQL database named by `--database-url` or `DATABASE_URL`, connected, or `nil` for neither.
    func sharedDatabase() async throws -> PostgresBackend? {
        let url = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        guard let url else { return nil }
        do {
            return try await PostgresBackend.connect(url: url, logger: Logger(label: "ghost.postgres"))
        } catch {
            throw ValidationError("\(databaseURL == nil ? "DATABASE_URL" : "--database-url"): \(error)")
        }
    }

    /// Where modules' configuration comes from, first match wins: `--set`, the environment, `--config-file`; and
    /// the file's provider, which reloads while it runs.
    func configurationProviders() async throws -> (
        [any ConfigProvider], ReloadingFileProvider<JSONSnapshot>?
    ) {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for setting in settings {
            let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
            values[AbsoluteConfigKey(parts[0].split(separator: ".").map(String.init))] = ConfigValue(
                .string(parts.count > 1 ? parts[1] : ""), isSecret: false)
        }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "command line (--set)", values: values), EnvironmentVariablesProvider(),
        ]
        guard let configFile else { return (providers, nil) }
        let location = InMemoryProvider(values: [
            "filePath": ConfigValue(.string(configFile), isSecret: false),
            "pollIntervalSeconds": ConfigValue(.int(max(1, configPollSeconds)), isSecret: false),
        ])
        do {
            let file = try await ReloadingFileProvider<JSONSnapshot>(config: ConfigReader(provider: location))
            providers.append(file)
            return (providers, file)
        } catch {
            throw ValidationError(
                "Cannot read \(configFile) as JSON configuration (\(error)); fix the file or the path.")
        }
    }
}
