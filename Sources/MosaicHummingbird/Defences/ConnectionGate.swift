internal import HTTPTypes
internal import Mosaic
internal import NIOCore
internal import NIOHTTPTypes
internal import Synchronization

/// The places held, in all and per client address: a server's connections (against
/// ``WebHostOptions/maximumConnections`` and ``WebHostOptions/maximumConnectionsPerClient``), or a host's live
/// streams (``WebHostOptions/maximumLiveStreams``, ``WebHostOptions/maximumLiveStreamsPerClient``).
final class ConnectionCounts: Sendable {
    /// Why a connection was not taken.
    enum Refusal {
        case serverFull
        case clientFull
    }

    let maximum: Int
    let maximumPerClient: Int
    private let held = Locked<(total: Int, byClient: [String: Int])>((0, [:]))

    init(maximum: Int, maximumPerClient: Int) {
        self.maximum = max(1, maximum)
        self.maximumPerClient = max(1, maximumPerClient)
    }

    /// Takes a place for `client`, or says why there is none.
    func admit(_ client: String) -> Refusal? {
        held.withLock { held in
            guard held.total < maximum else { return .serverFull }
            let count = held.byClient[client, default: 0]
            guard count < maximumPerClient else { return .clientFull }
            held.total += 1
            held.byClient[client] = count + 1
            return nil
        }
    }

    /// Frees a place `client` took.
    func release(_ client: String) {
        held.withLock { held in
            held.total -= 1
            let count = held.byClient[client, default: 1] - 1
            held.byClient[client] = count > 0 ? count : nil
        }
    }
}

/// The first handler of each connection: takes a place for it in ``ConnectionCounts``, or answers 503 with
/// `Retry-After` at once and closes it, so that a client over a limit is told instead of waiting in the listen
/// backlog while slow clients hold every place.
final class ConnectionGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let counts: ConnectionCounts
    /// The client whose place this connection holds, until it closes.
    private var holder: String?
    private var refusal: ConnectionCounts.Refusal?
    private var answered = false

    init(_ counts: ConnectionCounts) {
        self.counts = counts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let client = context.channel.remoteAddress?.ipAddress ?? "unknown"
        refusal = counts.admit(client)
        if refusal == nil { holder = client }
        if context.channel.isActive { answerRefusal(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        answerRefusal(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A refused connection's request is never read by anything: the answer is already on its way.
        guard refusal == nil else { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard refusal == nil else { return }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        releasePlace()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releasePlace()
    }

    private func releasePlace() {
        guard let holder else { return }
        counts.release(holder)
        self.holder = nil
    }

    private func answerRefusal(_ context: ChannelHandlerContext) {
        guard let refusal, !answered else { return }
        answered = true
        let message =
            switch refusal {
            case .serverFull:
                "The server holds as many connections as it serves (\(counts.maximum)); try again in a moment."
            case .clientFull:
                "This client already holds as many connections as one client may (\(counts.maximumPerClient)); "
                    + "close one, or try again in a moment."
            }
        // The client may still be sending its request: its output closes first so that it reads this answer.
        context.refuse(.serviceUnavailable, message, retryAfter: 1, lingering: .seconds(1))
    }
}
