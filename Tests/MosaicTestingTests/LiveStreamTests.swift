import Foundation
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import NIOCore
import Synchronization
import Testing

@testable import GhostApp

/// A latch that suspends callers, ignoring cancellation, until opened.
final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A dashboard widget that counts its builds, each waiting at a gate until the test opens it.
struct CountedWidgetModule: Module {
    static let manifest = Manifest(id: "com.test.counted-widget", version: "1.0.0")
    static let builds = Locked(0)
    static let (entered, enter) = AsyncStream.makeStream(of: Void.self)
    static let gate = Gate()

    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .dashboardWidgets, id: "counted", priority: 1, title: "Counted") {
            builds.withLock { $0 += 1 }
            enter.yield()
            await gate.wait()
            return Panel(.text("counted"))
        }
    }
}

/// Opens `/live?page=/dashboard` from `source` on a connection for it alone, and reads until its first event (or
/// until the server answers otherwise and closes); runs `body` while the stream is open, with what was read so far, then closes it.
func withLiveStream<Value>(
    port: Int, from source: String = "127.0.0.1",
    _ body: (_ received: String, _ rest: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) async throws ->
        Value
) async throws -> Value {
    try await RawHTTP.connect(port: port, from: source).executeThenClose { inbound, outbound in
        try await outbound.write(
            ByteBuffer(string: "GET /live?page=/dashboard HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))
        var received = ""
        var iterator = inbound.makeAsyncIterator()
        while !received.contains("event: regions"), let buffer = try await iterator.next() {
            received += String(buffer: buffer)
        }
        return try await body(received, &iterator)
    }
}

// The time limit guards against a hang only: a stream that never sends what a test waits for would wait forever.
@Suite("Live streams", .timeLimit(.minutes(1)))
struct LiveStreamTests {
    @Test("every stream of a page shares its renders: twenty streams, one build of a widget")
    func sharedRenders() async throws {
        let (app, web) = try await ghostWeb([CountedWidgetModule.self])
        var streams = [web.liveEvents("/dashboard", have: nil).makeAsyncIterator()]
        for await _ in CountedWidgetModule.entered { break }
        for _ in 1..<20 { streams.append(web.liveEvents("/dashboard", have: nil).makeAsyncIterator()) }
        CountedWidgetModule.gate.open()
        for index in streams.indices {
            let event = try #require(await streams[index].next())
            #expect(event.contains("counted"))
        }
        #expect(CountedWidgetModule.builds.withLock { $0 } == 1)
        streams.removeAll()
        await app.shutdown()
    }

    @Test("a live stream ends at its maximum age, measured on the host's clock, and frees its place")
    func maximumAge() async throws {
        let clock = ManualClock()
        var options = WebHostOptions.local
        options.liveStreamMaximumAge = .seconds(600)
        let (app, web) = try await ghostWeb(options: options, operations: OperationsOptions(clock: clock))
        let ended = Locked(false)
        var events = web.liveEvents("/dashboard", have: nil) { ended.withLock { $0 = true } }.makeAsyncIterator()
        #expect(await events.next() != nil)
        clock.advance(by: .seconds(599))
        try await app.sharedState.set(.favouriteCity, to: "Lisbon")
        #expect(await next(&events, containing: "<h3>Lisbon</h3>") != nil)
        clock.advance(by: .seconds(1))
        #expect(await events.next() == nil)
        #expect(ended.withLock { $0 })
        await app.shutdown()
    }

    @Test("a heartbeat never displaces an event the client has not read")
    func heartbeatKeepsEvents() async {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        let sender = LiveSender(continuation)
        var events = stream.makeAsyncIterator()
        sender.send("regions 1")
        sender.heartbeat()
        #expect(await events.next() == "regions 1")
        sender.heartbeat()
        #expect(await events.next() == LiveSender.heartbeat)
        sender.heartbeat()
        sender.send("regions 2")
        #expect(await events.next() == "regions 2")
    }

    @Test("over HTTP: one stream more than a client may hold is answered 503; other clients and ended streams")
    func perClientLimit() async throws {
        let clock = ManualClock()
        var options = WebHostOptions.local
        options.maximumLiveStreamsPerClient = 2
        options.liveStreamMaximumAge = .seconds(600)
        let (app, web) = try await ghostWeb(options: options, operations: OperationsOptions(clock: clock))
        try await withServer(web) { port, _ in
            try await withLiveStream(port: port) { first, firstRest in
                #expect(first.hasPrefix("HTTP/1.1 200"))
                try await withLiveStream(port: port) { second, secondRest in
                    #expect(second.hasPrefix("HTTP/1.1 200"))
                    let refused = try await RawHTTP.get(port: port, "/live?page=/dashboard")
                    #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused.prefix(300))")
                    #expect(refused.contains("Retry-After: 5"))
                    #expect(refused.contains("as many live streams as one client may (2)"))
                    try await withLiveStream(port: port, from: "127.0.0.2") { other, _ in
                        #expect(other.hasPrefix("HTTP/1.1 200"))
                    }
                    // Both streams end at their age; each frees its place before its response ends.
                    clock.advance(by: .seconds(600))
                    var rest = ""
                    while let buffer = try await firstRest.next() {
                        rest += String(buffer: buffer)
                        if rest.hasSuffix("0\r\n\r\n") { break }
                    }
                    rest = ""
                    while let buffer = try await secondRest.next() {
                        rest += String(buffer: buffer)
                        if rest.hasSuffix("0\r\n\r\n") { break }
                    }
                    try await withLiveStream(port: port) { again, _ in
                        #expect(again.hasPrefix("HTTP/1.1 200"))
                    }
                }
            }
        }
        await app.shutdown()
    }

    @Test("over HTTP: a quiet stream sends heartbeats, and one whose client left frees its place at a heartbeat")
    func clientLeft() async throws {
        let clock = ManualClock()
        var options = WebHostOptions.local
        options.maximumLiveStreamsPerClient = 1
        // A day: the place must be freed by a heartbeat's failed write, not by the stream's age.
        options.liveStreamMaximumAge = .seconds(86_400)
        let (app, web) = try await ghostWeb(options: options, operations: OperationsOptions(clock: clock))
        try await withServer(web) { port, _ in
            try await withLiveStream(port: port) { first, rest in
                #expect(first.hasPrefix("HTTP/1.1 200"))
                var received = ""
                while !received.contains(LiveSender.heartbeat) {
                    clock.advance(by: .seconds(15))
                    if let buffer = try await rest.next() { received += String(buffer: buffer) }
                }
            }
            // The client closed its stream: the heartbeats' writes fail, and the place is freed.
            var answer = ""
            while !answer.hasPrefix("HTTP/1.1 200") {
                clock.advance(by: .seconds(15))
                answer = try await withLiveStream(port: port) { received, _ in received }
            }
        }
        await app.shutdown()
    }
}
