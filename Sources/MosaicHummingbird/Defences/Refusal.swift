internal import HTTPTypes
internal import NIOCore
internal import NIOHTTPTypes

extension ChannelHandlerContext {
    /// Answers `status` with `message` as a short text and the security headers, below the router (a channel
    /// handler's refusal), then closes the connection: at once, or with `lingering` only its output, reading and
    /// dropping what the client still sends for that long, so that a client that had not finished sending still
    /// reads the answer instead of a reset.
    func refuse(
        _ status: HTTPResponse.Status, _ message: String, retryAfter: Int? = nil, lingering: TimeAmount? = nil
    ) {
        let body = ByteBuffer(string: message + "\n")
        var fields = HTTPFields()
        fields[.contentType] = "text/plain; charset=utf-8"
        fields[.contentLength] = "\(body.readableBytes)"
        fields[.connection] = "close"
        if let retryAfter { fields[.retryAfter] = "\(retryAfter)" }
        WebHost.addSecurityHeaders(to: &fields)
        write(NIOAny(HTTPResponsePart.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        write(NIOAny(HTTPResponsePart.body(body)), promise: nil)
        let channel = self.channel
        writeAndFlush(NIOAny(HTTPResponsePart.end(nil))).whenComplete { _ in
            guard let lingering else { return channel.close(promise: nil) }
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: lingering) { channel.close(promise: nil) }
        }
    }
}
