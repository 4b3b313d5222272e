public import Hummingbird
public import NIOCore

/// The context of every request the web host's routers see: Hummingbird's, with the address the request came from,
/// which the host slows repeated wrong operator keys by.
public struct WebRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's part of the context.
    public var coreContext: CoreRequestContextStorage
    /// The address of the connection the request came on (a proxy's, behind one); `nil` when there is none.
    public let remoteAddress: SocketAddress?

    /// The context of a request on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Who sent the request, as the wrong-key count tells clients apart: the address without its port.
    var client: String { remoteAddress?.ipAddress ?? "unknown" }
}
