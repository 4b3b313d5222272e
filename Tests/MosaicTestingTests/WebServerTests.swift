import Foundation
import Logging
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import GhostApp

/// Raw HTTP/1.1 over a socket, for what a well-behaved client never sends.
enum RawHTTP {
    /// A connection to the server on loopback, from `source` (any loopback address: 127.0.0.2 is another client).
    static func connect(port: Int, from source: String = "127.0.0.1") async throws -> NIOAsyncChannel<
        ByteBuffer, ByteBuffer
    > {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
        return try await bootstrap.connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    }

    /// Sends `text` and returns everything the server sends until it closes the connection. A server that answers
    /// before the request arrives (a connection over a limit) may have closed the connection by the time it is
    /// written; what it sent is returned all the same.
    static func exchange(port: Int, from source: String = "127.0.0.1", _ text: String) async throws -> String {
        try await connect(port: port, from: source).executeThenClose { inbound, outbound in
            try? await outbound.write(ByteBuffer(string: text))
            var received = ""
            for try await buffer in inbound { received += String(buffer: buffer) }
            return received
        }
    }

    /// A GET that closes the connection after its answer.
    static func get(
        port: Int, _ path: String, host: String = "localhost", from source: String = "127.0.0.1"
    ) async throws -> String {
        try await exchange(
            port: port, from: source, "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
    }

    /// Runs `body` while a connection from `source` is held open, after one answered request proves the server
    /// took it.
    static func holding<Value>(
        port: Int, from source: String = "127.0.0.1", _ body: () async throws -> Value
    ) async throws -> Value {
        try await connect(port: port, from: source).executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET /dashboard HTTP/1.1\r\nHost: localhost\r\n\r\n"))
            var iterator = inbound.makeAsyncIterator()
            #expect(try await iterator.next().map { String(buffer: $0) }?.hasPrefix("HTTP/1.1 200") == true)
            return try await body()
        }
    }
}

/// A server on a free port for the length of `body`, shut down gracefully after it.
func withServer<Value: Sendable>(
    _ web: WebHost, address: String = "127.0.0.1",
    logger: Logger = Logger(label: "test.server") { _ in SwiftLogNoOpLogHandler() },
    _ body: (_ port: Int, _ group: ServiceGroup) async throws -> Value
) async throws -> Value {
    let (ports, announce) = AsyncStream.makeStream(of: Int.self)
    let group = WebServer.serviceGroup(web, address: address, port: 0, logger: logger, signals: []) {
        announce.yield($0)
    }
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let value = try await body(port, group)
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return value
    }
}

/// A route that waits at a gate, and a module that records when it deactivates.
struct GateModule: Module {
    static let manifest = Manifest(id: "com.test.gate", version: "1.0.0")
    static let (entered, enter) = AsyncStream.makeStream(of: Void.self)
    static let (opened, open) = AsyncStream.makeStream(of: Void.self)
    static let events = Locked<[String]>([])

    static func register(in module: inout ModuleRegistrar) {
        module.route(.get, "/slow") { _ in
            enter.yield()
            for await _ in opened { break }
            events.withLock { $0.append("answered") }
            return WebResponse(body: "done")
        }
    }

    func deactivate() async {
        Self.events.withLock { $0.append("deactivated") }
    }
}

@Suite("Web server")
struct WebServerTests {
    @Test("a request naming another host is refused (DNS rebinding), and never sees the token")
    func rebinding() async throws {
        let (app, web) = try await ghostWeb()
        try await withServer(web) { port, _ in
            let page = try await RawHTTP.get(port: port, "/settings", host: "attacker.example")
            #expect(page.hasPrefix("HTTP/1.1 421"))
            #expect(page.contains("not to “attacker.example”"))
            #expect(!page.contains(web.csrfToken))
            let form = "csrf=\(web.csrfToken)&entitlement=weather&action=revoke"
            let post = try await RawHTTP.exchange(
                port: port,
                "POST /settings/entitlements HTTP/1.1\r\nHost: attacker.example:\(port)\r\nConnection: close\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n"
                    + form)
            #expect(post.hasPrefix("HTTP/1.1 421"))
            #expect(await app.state(of: "com.ghost.weather") == .active)
            #expect(
                try await RawHTTP.get(port: port, "/dashboard", host: "localhost:\(port)").hasPrefix("HTTP/1.1 200"))
            #expect(try await RawHTTP.get(port: port, "/dashboard", host: "[::1]:\(port)").hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("a slowloris connection is closed after the idle time limit, while other requests are answered")
    func slowloris() async throws {
        // Long enough that a loaded machine sends the first bytes and the other request within it.
        let (_, web) = try await ghostWeb(options: WebHostOptions(idleTimeLimit: .seconds(1)))
        try await withServer(web) { port, _ in
            let slow = try await RawHTTP.connect(port: port)
            try await slow.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: "GET /dashboard HTTP/1.1\r\nHost: local"))
                #expect(try await RawHTTP.get(port: port, "/dashboard").hasPrefix("HTTP/1.1 200"))
                var received = ""
                // Ends when the server closes the connection: the read returns end of file.
                for try await buffer in inbound { received += String(buffer: buffer) }
                #expect(!received.contains("200 OK"))
            }
        }
    }

    @Test("over the connection limit a client is answered 503 at once, and served once a connection closes")
    func connectionLimit() async throws {
        // The idle time limit is long: only the client's close of the first connection frees the one place.
        let (_, web) = try await ghostWeb(options: WebHostOptions(idleTimeLimit: .seconds(60), maximumConnections: 1))
        try await withServer(web) { port, _ in
            let refused = try await RawHTTP.holding(port: port) {
                try await RawHTTP.get(port: port, "/dashboard", from: "127.0.0.2")
            }
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused.prefix(300))")
            #expect(refused.contains("Retry-After: 1"))
            #expect(refused.contains("as many connections as it serves (1)"))
            #expect(refused.lowercased().contains("x-frame-options: deny"))
            // The server frees the place when it sees the close, which the client cannot wait on: it asks again.
            var answer = ""
            while !answer.hasPrefix("HTTP/1.1 200") { answer = try await RawHTTP.get(port: port, "/dashboard") }
        }
    }

    @Test("one client address holds at most maximumConnectionsPerClient connections; other clients are still served")
    func connectionLimitPerClient() async throws {
        let options = WebHostOptions(idleTimeLimit: .seconds(60), maximumConnectionsPerClient: 1)
        let (_, web) = try await ghostWeb(options: options)
        try await withServer(web) { port, _ in
            let (same, other) = try await RawHTTP.holding(port: port) {
                (
                    try await RawHTTP.get(port: port, "/dashboard"),
                    try await RawHTTP.get(port: port, "/dashboard", from: "127.0.0.2")
                )
            }
            #expect(same.hasPrefix("HTTP/1.1 503"), "\(same.prefix(300))")
            #expect(same.contains("as many connections as one client may (1)"))
            #expect(other.hasPrefix("HTTP/1.1 200"), "\(other.prefix(300))")
        }
    }

    @Test("on shutdown the server refuses new requests and finishes the one in flight before any module deactivates")
    func shutdownOrder() async throws {
        let (_, web) = try await ghostWeb([GateModule.self])
        try await withServer(web) { port, group in
            async let slow = RawHTTP.get(port: port, "/api/slow")
            for await _ in GateModule.entered { break }
            await group.triggerGracefulShutdown()
            // The listener closes once shutdown begins: a new connection is refused.
            var refused = false
            while !refused {
                do {
                    _ = try await RawHTTP.get(port: port, "/dashboard")
                } catch {
                    refused = true
                }
            }
            #expect(GateModule.events.withLock { $0 }.isEmpty)
            GateModule.open.yield()
            let answer = try await slow
            #expect(answer.hasSuffix("done"))
        }
        #expect(GateModule.events.withLock { $0 } == ["answered", "deactivated"])
    }
}

@Suite("Web server head and body limits")
struct WebServerLimitTests {
    @Test("a header line over the limit is refused with 431, the security headers and a short body")
    func longHeaderLine() async throws {
        let (_, web) = try await ghostWeb()
        let answer = try await withServer(web) { port, _ in
            try await RawHTTP.exchange(
                port: port,
                "GET /dashboard HTTP/1.1\r\nHost: localhost\r\nX-Padding: \(String(repeating: "x", count: 65_536))\r\n"
                    + "Connection: close\r\n\r\n")
        }
        #expect(answer.hasPrefix("HTTP/1.1 431"))
        #expect(answer.contains("X-Padding header field is 65547 bytes"))
        #expect(answer.lowercased().contains("x-frame-options: deny"))
        #expect(answer.utf8.count < 8_192)
    }

    @Test("what the HTTP parser refuses is answered with the security headers and a short body: 431, 400")
    func parserRefusals() async throws {
        let (_, web) = try await ghostWeb()
        let (overflow, garbled) = try await withServer(web) { port, _ in
            (
                try await RawHTTP.exchange(
                    port: port,
                    "GET /dashboard HTTP/1.1\r\nHost: localhost\r\nX-Padding: "
                        + "\(String(repeating: "x", count: 100_000))\r\n\r\n"),
                try await RawHTTP.exchange(port: port, "GET /dashboard HTTP/1.1\r\nHost localhost\r\n\r\n")
            )
        }
        // Before, each was a bare 400 with no body and none of the headers.
        #expect(overflow.hasPrefix("HTTP/1.1 431"), "\(overflow.prefix(300))")
        #expect(overflow.contains("larger than the server reads"))
        #expect(garbled.hasPrefix("HTTP/1.1 400"), "\(garbled.prefix(300))")
        #expect(garbled.contains("not valid HTTP/1.1"))
        for answer in [overflow, garbled] {
            #expect(answer.lowercased().contains("x-frame-options: deny"))
            #expect(answer.lowercased().contains("content-security-policy"))
        }
    }

    @Test("a GET announcing a body is answered 400 at once and closed, without waiting for the body")
    func bodyOnGet() async throws {
        // The idle limit is long: only the refusal can end the exchange soon; before it, the server waited on.
        let (_, web) = try await ghostWeb(options: WebHostOptions(idleTimeLimit: .seconds(600)))
        let answer = try await withServer(web) { port, _ in
            try await RawHTTP.exchange(
                port: port, "GET /dashboard HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000000000\r\n\r\nx")
        }
        #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
        #expect(answer.contains("carries no body"))
        #expect(answer.lowercased().contains("x-frame-options: deny"))
    }

    @Test("a body that arrives slower than the minimum rate after the grace period is answered 408 and closed")
    func slowBody() async throws {
        // Ten bytes of a thousand, then nothing: below 240 bytes/s once the (short) grace period is over. The idle
        // limit is long, so only the rate check can end the exchange.
        let options = WebHostOptions(idleTimeLimit: .seconds(600), bodyGracePeriod: .milliseconds(100))
        let (_, web) = try await ghostWeb(options: options)
        let answer = try await withServer(web) { port, _ in
            try await RawHTTP.exchange(
                port: port,
                "POST /settings/entitlements HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                    + "application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nentitlement")
        }
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer.prefix(300))")
        #expect(answer.contains("less than 240 bytes per second"))
    }

    @Test("a body sent at once is taken whatever the grace period")
    func promptBody() async throws {
        let (_, web) = try await ghostWeb(options: WebHostOptions(bodyGracePeriod: .zero))
        let form = "csrf=\(web.csrfToken)&url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DOslo"
        let answer = try await withServer(web) { port, _ in
            try await RawHTTP.exchange(
                port: port,
                "POST /open HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: "
                    + "application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n\(form)")
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(300))")
        #expect(answer.contains("Oslo"))
    }
}
