internal import Hummingbird
internal import HummingbirdCore
public import Logging
internal import Mosaic
public import MosaicKernel
internal import NIOCore
package import ServiceLifecycle
package import UnixSignals

/// Serves a ``WebHost`` until SIGINT or SIGTERM, then shuts down gracefully: the server stops accepting
/// connections and finishes the requests in flight, and only then do the modules deactivate (dependents first).
///
/// Whoever changes the app (grant, revoke, resubmit) presents ``WebHostOptions/operatorKey``, however the server is
/// bound: behind a proxy every request comes from loopback.
///
/// The server keeps ``WebHost/options``: connections idle for ``WebHostOptions/idleTimeLimit`` (including one that
/// sends part of a request and then nothing) are closed, and at most ``WebHostOptions/maximumConnections`` are
/// served at once, ``WebHostOptions/maximumConnectionsPerClient`` of them for one client address; a connection over
/// either limit is answered 503 at once and closed.
public enum WebServer {
    /// Runs until a signal (or cancellation). `onRunning` gets the port bound, which differs from `port` when
    /// that is 0 (any free port).
    ///
    /// The server boots the kernel unless the host already did (`onBooted` then gets the report), so that
    /// `/health/ready` answers 503 while it boots. With an `admin` address, `/health/…` and `/metrics` are served
    /// there too, and that server stops only after the modules have deactivated.
    public static func run(
        _ host: WebHost, address: String = "127.0.0.1", port: Int = 8080, admin: AdminAddress? = nil,
        logger: Logger, onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
        onBooted: @escaping @Sendable (BootReport) async -> Void = { _ in }
    ) async throws {
        try await serviceGroup(
            host, address: address, port: port, admin: admin, logger: logger, signals: [.sigterm, .sigint],
            onRunning: onRunning, onBooted: onBooted
        ).run()
    }

    /// The services that serve `host`, shut down gracefully on `signals` or
    /// `ServiceGroup.triggerGracefulShutdown()`.
    package static func serviceGroup(
        _ host: WebHost, address: String = "127.0.0.1", port: Int, admin: AdminAddress? = nil, logger: Logger,
        signals: [UnixSignal], onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
        onBooted: @escaping @Sendable (BootReport) async -> Void = { _ in },
        onAdminRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> ServiceGroup {
        let application = Application(
            router: host.router(servedOn: WebHost.Exposure(address: address)),
            server: .http1(configuration: defendedChannel(host.options, logger: logger)),
            configuration: ApplicationConfiguration(
                address: .hostname(address, port: port), serverName: "Mosaic",
                availableConnectionsDelegate: acceptLimit(host.options, logger: logger)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        // A service group shuts its services down in reverse order, each after the one after it has finished:
        // readiness turns 503 at once, then the server stops accepting and drains the requests in flight, then the
        // kernel deactivates the modules, and only then does the admin server (still answering 503) stop.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let admin {
            services.append(
                .init(
                    service: Application(
                        router: host.adminRouter(servedOn: WebHost.Exposure(address: admin.address)),
                        // The admin port may bind beyond loopback for an orchestrator's probes: the same defences,
                        // with places of its own, so that a flood of either port leaves the other's alone.
                        server: .http1(configuration: defendedChannel(host.options, logger: logger)),
                        configuration: ApplicationConfiguration(
                            address: .hostname(admin.address, port: admin.port), serverName: "Mosaic admin",
                            availableConnectionsDelegate: acceptLimit(host.options, logger: logger)),
                        onServerRunning: { channel in await onAdminRunning(channel.localAddress?.port ?? admin.port) },
                        logger: logger)))
        }
        services += [
            .init(service: KernelService(kernel: host.kernel, readiness: host.readiness, onBooted: onBooted)),
            .init(service: application),
            .init(service: ReadinessService(readiness: host.readiness)),
        ]
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: signals, logger: logger))
    }
}

extension WebServer {
    /// A connection's handlers under `options`: the connection limits (with places of its own for each server),
    /// the request body guard, the stalled-write guard and the idle limit.
    static func defendedChannel(_ options: WebHostOptions, logger: Logger) -> HTTP1Channel.Configuration {
        let counts = ConnectionCounts(
            maximum: options.maximumConnections, maximumPerClient: options.maximumConnectionsPerClient)
        return HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ConnectionGate(counts),
                RequestBodyGuard(minimumRate: options.minimumBodyRate, grace: options.bodyGracePeriod),
                StalledWriteGuard(limit: options.idleTimeLimit, logger: logger),
            ], idleTimeout: TimeAmount(clamping: options.idleTimeLimit))
    }

    /// Connections over the limits are accepted only to be answered 503 and closed within a second; beyond twice
    /// the limit the server stops accepting (the sockets the process may open are finite).
    static func acceptLimit(_ options: WebHostOptions, logger: Logger) -> MaximumAvailableConnections {
        MaximumAvailableConnections(
            options.maximumConnections.multipliedReportingOverflow(by: 2).partialValue, logger: logger)
    }
}

/// Boots the kernel (unless the host did), holds it for the life of the server, and shuts it down when the
/// server has stopped.
struct KernelService: Service {
    let kernel: Kernel
    let readiness: Readiness
    let onBooted: @Sendable (BootReport) async -> Void

    func run() async throws {
        do {
            await onBooted(try await kernel.boot())
        } catch  where error.code == .alreadyBooted {
        } catch {
            readiness.markStopping()
            throw error
        }
        readiness.markReady()
        try? await gracefulShutdown()
        readiness.markStopping()
        await kernel.shutdown()
    }
}

/// The first service told of a shutdown: turns readiness 503 before anything stops.
struct ReadinessService: Service {
    let readiness: Readiness

    func run() async throws {
        try? await gracefulShutdown()
        readiness.markStopping()
    }
}

/// Where a separate admin server listens: `/health/…` and `/metrics` only. Loopback by default.
public struct AdminAddress: Sendable, Hashable {
    /// The address to listen on.
    public var address: String
    /// The port (0: any free port).
    public var port: Int

    /// An admin server on `port`, on loopback unless `address` says otherwise.
    public init(address: String = "127.0.0.1", port: Int) {
        self.address = address
        self.port = port
    }
}

extension TimeAmount {
    /// `duration` as NIO's time amount, clamped: a limit meant as "never" (`.seconds(.max)`) must not overflow into
    /// a trap.
    init(clamping duration: Duration) {
        self = .nanoseconds(duration.nanosecondsClamped)
    }
}
