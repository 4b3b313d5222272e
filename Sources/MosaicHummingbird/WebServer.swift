internal import Hummingbird
public import Logging
internal import MosaicKernel
internal import NIOCore
internal import ServiceLifecycle
internal import UnixSignals

/// Serves a ``WebHost`` until SIGINT or SIGTERM, then shuts down gracefully: the modules deactivate (dependents
/// first), and only then does the server stop.
public enum WebServer {
    /// Runs until a signal (or cancellation). `onRunning` gets the port bound, which differs from `port` when
    /// that is 0 (any free port).
    public static func run(
        _ host: WebHost, address: String = "127.0.0.1", port: Int = 8080, logger: Logger,
        onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) async throws {
        let application = Application(
            router: host.router(),
            configuration: ApplicationConfiguration(address: .hostname(address, port: port), serverName: "Mosaic"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        // A service group stops its services in reverse order: the kernel's first, the server's after it.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: application),
                    .init(service: KernelService(kernel: host.kernel)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Holds the kernel for the life of the server, and shuts it down when the server is asked to stop.
struct KernelService: Service {
    let kernel: Kernel

    func run() async throws {
        try? await gracefulShutdown()
        await kernel.shutdown()
    }
}
