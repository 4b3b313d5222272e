internal import Hummingbird
internal import HummingbirdCore
public import Logging
internal import MosaicKernel
internal import NIOCore
package import ServiceLifecycle
package import UnixSignals

/// Serves a ``WebHost`` until SIGINT or SIGTERM, then shuts down gracefully: the server stops accepting
/// connections and finishes the requests in flight, and only then do the modules deactivate (dependents first).
///
/// The server keeps ``WebHost/options``: connections idle for ``WebHostOptions/idleTimeout`` (including one that
/// sends part of a request and then nothing) are closed, and at most ``WebHostOptions/maximumConnections`` are
/// served at once.
public enum WebServer {
    /// Runs until a signal (or cancellation). `onRunning` gets the port bound, which differs from `port` when
    /// that is 0 (any free port).
    public static func run(
        _ host: WebHost, address: String = "127.0.0.1", port: Int = 8080, logger: Logger,
        onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) async throws {
        try await serviceGroup(
            host, address: address, port: port, logger: logger, signals: [.sigterm, .sigint], onRunning: onRunning
        ).run()
    }

    /// The services that serve `host`, shut down gracefully on `signals` or
    /// `ServiceGroup.triggerGracefulShutdown()`.
    package static func serviceGroup(
        _ host: WebHost, address: String = "127.0.0.1", port: Int, logger: Logger, signals: [UnixSignal],
        onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> ServiceGroup {
        let idle = host.options.idleTimeout.components
        // Clamped: a timeout meant as "never" (`.seconds(.max)`) must not overflow into a trap.
        let (nanoseconds, overflow) = idle.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let idleTimeout = TimeAmount.nanoseconds(
            overflow ? .max : nanoseconds.addingReportingOverflow(idle.attoseconds / 1_000_000_000).partialValue)
        let application = Application(
            router: host.router(),
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: idleTimeout)),
            configuration: ApplicationConfiguration(
                address: .hostname(address, port: port), serverName: "Mosaic",
                availableConnectionsDelegate: MaximumAvailableConnections(
                    host.options.maximumConnections, logger: logger)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        // A service group shuts its services down in reverse order, each after the one after it has finished: the
        // server first (it stops accepting and drains the requests in flight), then the kernel.
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: KernelService(kernel: host.kernel)),
                    .init(service: application),
                ],
                gracefulShutdownSignals: signals, logger: logger))
    }
}

/// Holds the kernel for the life of the server, and shuts it down when the server has stopped.
struct KernelService: Service {
    let kernel: Kernel

    func run() async throws {
        try? await gracefulShutdown()
        await kernel.shutdown()
    }
}
