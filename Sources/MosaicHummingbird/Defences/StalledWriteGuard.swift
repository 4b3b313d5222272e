internal import Logging
internal import NIOCore
internal import NIOHTTPTypes

/// Closes a connection whose response makes no progress for ``WebHostOptions/idleTimeLimit``: a client that stops
/// reading (a `/live` stream it never drains, a large body it never takes) would otherwise hold its connection, and
/// the task writing to it, for ever, since the idle handler counts only what the client sends.
///
/// While the channel is unwritable (what waits to be sent is over NIO's high-water mark: the socket's buffers are
/// full), the bytes waiting are compared once a limit: fewer than before is progress, and the limit starts over;
/// as many, and the connection is closed. A client that reads, however slowly, is never cut off while the socket
/// takes more of the response within each limit.
final class StalledWriteGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let limit: TimeAmount
    private let logger: Logger
    private var check: Scheduled<Void>?

    init(limit: Duration, logger: Logger) {
        self.limit = TimeAmount(clamping: limit)
        self.logger = logger
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            check?.cancel()
            check = nil
        } else if check == nil {
            watch(context, waiting: Self.waiting(context))
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
    }

    /// Compares the bytes waiting with `waiting` a limit from now.
    private func watch(_ context: ChannelHandlerContext, waiting: Int) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(in: limit) {
            let (handler, context) = loopBound.value
            handler.compare(context, with: waiting)
        }
    }

    private func compare(_ context: ChannelHandlerContext, with before: Int) {
        check = nil
        guard !context.channel.isWritable else { return }
        let now = Self.waiting(context)
        guard now >= before else { return watch(context, waiting: now) }
        logger.info(
            "closed a connection whose response made no progress (its client stopped reading)",
            metadata: [
                "client": "\(context.channel.remoteAddress?.ipAddress ?? "unknown")",
                "waiting_bytes": "\(now)", "limit_ms": "\(limit.nanoseconds / 1_000_000)",
            ])
        context.close(promise: nil)
    }

    /// The bytes the channel holds that the socket has not taken; 0 when the channel cannot say (then only its
    /// writability counts).
    private static func waiting(_ context: ChannelHandlerContext) -> Int {
        (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
    }
}
