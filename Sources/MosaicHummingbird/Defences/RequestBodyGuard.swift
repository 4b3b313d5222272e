internal import HTTPTypes
internal import NIOCore
internal import NIOHTTP1
internal import NIOHTTPTypes

/// Guards each connection's requests below the router, where a refusal can close the connection without reading
/// what the client still sends (Hummingbird would read a refused request's body to its end):
///
/// - a `GET`, `HEAD` or `OPTIONS` that announces a body is answered 400 at once, never passed on;
/// - a body arriving slower than ``WebHostOptions/minimumBodyRate`` on average, once
///   ``WebHostOptions/bodyGracePeriod`` has passed since its head, is answered 408;
/// - a request the HTTP parser refuses is answered 431 when its head is over the parser's limits (80 KB in all,
///   or 1,000 fields), else 400, instead of Hummingbird's bare 400 without the security headers.
///
/// Either way the connection is closed. Hummingbird's idle limit cannot do this: every byte resets it. Inbound only:
/// its refusals are written to the handlers before it, and a response's parts pass it by, not through a call each.
final class RequestBodyGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let minimumRate: Int
    private let grace: TimeAmount
    /// When the body under way began, and how much of it has come.
    private var bodyStarted: NIODeadline?
    private var received = 0
    private var check: Scheduled<Void>?
    /// A refusal was sent: everything the client sends after it is dropped.
    private var refused = false

    init(minimumRate: Int, grace: Duration) {
        self.minimumRate = minimumRate
        self.grace = TimeAmount(clamping: grace)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head(let request):
            let announcesBody =
                request.headerFields[.transferEncoding] != nil
                || request.headerFields[.contentLength].map { $0 != "0" } ?? false
            if announcesBody, [.get, .head, .options].contains(request.method) {
                refuse(
                    context, .badRequest,
                    "A \(request.method.rawValue) request carries no body; send it without Content-Length or "
                        + "Transfer-Encoding.")
                return
            }
            if announcesBody {
                bodyStarted = .now()
                received = 0
                scheduleCheck(context, in: grace)
            }
        case .body(let buffer):
            received += buffer.readableBytes
        case .end:
            bodyStarted = nil
            check?.cancel()
            check = nil
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        guard !refused else { return }
        if case .headerOverflow = parserError {
            refuse(
                context, .requestHeaderFieldsTooLarge,
                "The request's head is larger than the server reads (80 KB, 1,000 fields); send fewer or shorter "
                    + "header fields.")
        } else {
            refuse(context, .badRequest, "The request is not valid HTTP/1.1 (\(parserError)).")
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        context.fireChannelInactive()
    }

    /// Checks the body's rate `delay` from now, and each second after while it lasts.
    private func scheduleCheck(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        check?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.checkRate(context)
        }
    }

    private func checkRate(_ context: ChannelHandlerContext) {
        guard let started = bodyStarted, !refused else { return }
        let elapsed = NIODeadline.now() - started
        // In floating point: a rate configured very high must not overflow into a trap.
        let expected = Double(minimumRate) * Double(elapsed.nanoseconds) / 1e9
        if Double(received) < expected {
            refuse(
                context, .requestTimeout,
                "The request's body arrived at less than \(minimumRate) bytes per second; send it at once.")
        } else {
            scheduleCheck(context, in: .seconds(1))
        }
    }

    /// Answers `status` with `message` and closes the connection.
    private func refuse(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ message: String) {
        refused = true
        bodyStarted = nil
        check?.cancel()
        context.refuse(status, message)
    }
}
