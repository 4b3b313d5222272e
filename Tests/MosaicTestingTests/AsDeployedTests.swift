import Logging
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import NIOCore
import ServiceLifecycle
import Testing

@testable import GhostApp

/// A route that answers 32 MB, more than the sockets between a client and the server hold.
struct LargeBodyModule: Module {
    static let manifest = Manifest(id: "com.test.large-body", version: "1.0.0")
    static let size = 32 << 20

    static func register(in module: inout ModuleRegistrar) {
        module.route(.get, "/large") { _ in WebResponse(body: String(repeating: "x", count: size)) }
    }
}

/// A dashboard widget of a megabyte, made anew whenever the favourite city changes.
struct LargeWidgetModule: Module {
    static let manifest = Manifest(id: "com.test.large-widget", version: "1.0.0")

    static func register(in module: inout ModuleRegistrar) {
        module.reads(.favouriteCity)
        module.contribute(to: .dashboardWidgets, id: "large", priority: 1, title: "Large") {
            (context: ActivationContext) in
            Panel(.text(context.state[.favouriteCity] + String(repeating: "x", count: 1 << 20)))
        }
    }
}

/// A log handler that hands every message to a stream, so that a test can wait for one.
struct SignallingLogHandler: LogHandler {
    let messages: AsyncStream<String>.Continuation
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel = Logger.Level.trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.yield("\(event.message)")
    }
}

// The time limit guards against a hang only: a connection the server never gives up on would be waited on forever.
@Suite("Web server, as deployed", .timeLimit(.minutes(1)))
struct AsDeployedTests {
    @Test("a live stream whose client stops reading is closed after the idle time limit, and the server says so")
    func stalledWrite() async throws {
        let (messages, log) = AsyncStream.makeStream(of: String.self)
        let logger = Logger(label: "test.server") { _ in SignallingLogHandler(messages: log) }
        let (app, web) = try await ghostWeb(
            [LargeWidgetModule.self], options: WebHostOptions(idleTimeLimit: .seconds(1)))
        try await withServer(web, logger: logger) { port, _ in
            try await RawHTTP.connect(port: port).executeThenClose { inbound, outbound in
                try await outbound.write(
                    ByteBuffer(string: "GET /live?page=/dashboard HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                // Each change sends a megabyte that the client never reads, until the sockets are full and the
                // server gives up on the connection.
                let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        for await message in messages where message.contains("made no progress") { return true }
                        return false
                    }
                    group.addTask {
                        var round = 0
                        while !Task.isCancelled {
                            round += 1
                            try await app.sharedState.set(.favouriteCity, to: "City \(round)")
                            await Task.yield()
                        }
                        return false
                    }
                    let first = try await group.next() ?? false
                    group.cancelAll()
                    return first
                }
                #expect(closed)
                var received = 0
                do {
                    for try await buffer in inbound { received += buffer.readableBytes }
                } catch {
                    // The server's close may reset the connection: what came before it counts all the same.
                }
                #expect(received > 0)
            }
        }
        await app.shutdown()
    }

    @Test("a client that reads a large response at once takes all of it")
    func largeResponse() async throws {
        let (app, web) = try await ghostWeb([LargeBodyModule.self], options: WebHostOptions(idleTimeLimit: .seconds(1)))
        try await withServer(web) { port, _ in
            let response = try await RawHTTP.get(port: port, "/api/large")
            #expect(response.hasPrefix("HTTP/1.1 200"))
            #expect(response.utf8.count > LargeBodyModule.size)
        }
        await app.shutdown()
    }

    @Test("the admin port has the public port's defences, with places of its own")
    func adminDefences() async throws {
        let options = WebHostOptions(idleTimeLimit: .seconds(60), maximumConnectionsPerClient: 1)
        let (app, web) = try await ghostWeb(options: options)
        let (adminPorts, announceAdmin) = AsyncStream.makeStream(of: Int.self)
        let group = WebServer.serviceGroup(
            web, port: 0, admin: AdminAddress(port: 0),
            logger: Logger(label: "test.server") { _ in SwiftLogNoOpLogHandler() }, signals: [],
            onAdminRunning: { announceAdmin.yield($0) })
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var ports = adminPorts.makeAsyncIterator()
            let admin = try #require(await ports.next())
            try await RawHTTP.connect(port: admin).executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                var iterator = inbound.makeAsyncIterator()
                #expect(try await iterator.next().map { String(buffer: $0) }?.hasPrefix("HTTP/1.1 200") == true)
                let same = try await RawHTTP.get(port: admin, "/health/live")
                #expect(same.hasPrefix("HTTP/1.1 503"), "\(same.prefix(300))")
                #expect(same.contains("as many connections as one client may (1)"))
                let other = try await RawHTTP.get(port: admin, "/health/live", from: "127.0.0.2")
                #expect(other.hasPrefix("HTTP/1.1 200"))
                let withBody = try await RawHTTP.exchange(
                    port: admin, from: "127.0.0.3",
                    "GET /health/live HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\n")
                #expect(withBody.hasPrefix("HTTP/1.1 400"), "\(withBody.prefix(300))")
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        await app.shutdown()
    }
}
