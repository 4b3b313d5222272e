import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
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

/// Reads `iterator` until an element satisfies `condition`, returning that element; `nil` when the stream ends
/// first. A change can take several steps (revoking `weather` also stops Dashboard, which requires it), each an event.
func next(
    _ iterator: inout AsyncStream<String>.Iterator, where condition: (String) -> Bool
) async -> String? {
    while let event = await iterator.next() {
        if condition(event) { return event }
    }
    return nil
}

/// Reads `iterator` until an element contains `text`.
func next(_ iterator: inout AsyncStream<String>.Iterator, containing text: String) async -> String? {
    await next(&iterator) { $0.contains(text) }
}

/// The `id` line of a server-sent event: the page's version.
func version(of event: String) -> String? {
    event.split(separator: "\n").first { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
}

// The time limit guards against a hang only: a stream that never sends what a test waits for would wait forever.
@Suite("Live pages", .timeLimit(.minutes(1)))
struct LivePageTests {
    @Test("a live page's stream sends its regions at once, then after a revoke, a grant and a state write it showed")
    func events() async throws {
        let (app, web) = try await ghostWeb()
        var events = web.liveEvents("/dashboard", have: nil).makeAsyncIterator()
        let first = try #require(await events.next())
        #expect(first.hasPrefix("id: ") && first.contains("event: regions\ndata: {"))
        #expect(first.contains(#"data-module=\"com.ghost.weather\""#))

        try await app.revoke("weather")
        let revoked = await next(&events) { !$0.contains(#"data-module=\"com.ghost.weather\""#) }
        #expect(revoked?.contains(#"data-module=\"com.ghost.sports\""#) == true)

        try await app.grant("weather")
        #expect(await next(&events, containing: #"data-module=\"com.ghost.weather\""#) != nil)

        try await app.sharedState.set(.favouriteCity, to: "Lisbon")
        #expect(await next(&events, containing: "<h3>Lisbon</h3>") != nil)
    }

    @Test("a client that reconnects with the current version gets nothing until the page changes, then the change")
    func resynchronises() async throws {
        let (app, web) = try await ghostWeb()
        var first = web.liveEvents("/dashboard", have: nil).makeAsyncIterator()
        let current = try #require(await first.next().flatMap(version(of:)))

        var reconnected = web.liveEvents("/dashboard", have: current).makeAsyncIterator()
        try await app.sharedState.set(.favouriteCity, to: "Oslo")
        let event = try #require(await reconnected.next())
        #expect(event.contains("<h3>Oslo</h3>"))
        #expect(version(of: event) != current)

        var stale = web.liveEvents("/dashboard", have: "an old version").makeAsyncIterator()
        #expect(try #require(await stale.next()).contains("<h3>Oslo</h3>"))
    }

    @Test(
        "over HTTP: /live streams events, and a graceful shutdown ends an open stream instead of waiting for it")
    func overHTTP() async throws {
        let (app, web) = try await ghostWeb()
        try await withServer(web) { port, group in
            let connection = try await RawHTTP.connect(port: port)
            try await connection.executeThenClose { inbound, outbound in
                try await outbound.write(
                    ByteBuffer(string: "GET /live?page=/dashboard HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                var received = ""
                var iterator = inbound.makeAsyncIterator()
                while !received.contains("event: regions"), let buffer = try await iterator.next() {
                    received += String(buffer: buffer)
                }
                #expect(received.hasPrefix("HTTP/1.1 200"))
                #expect(received.lowercased().contains("content-type: text/event-stream"))
                #expect(!received.lowercased().contains("content-length"))
                #expect(received.contains("Content-Security-Policy"))
                try await app.sharedState.set(.favouriteCity, to: "Lisbon")
                while !received.contains("<h3>Lisbon</h3>"), let buffer = try await iterator.next() {
                    received += String(buffer: buffer)
                }
                #expect(received.contains("<h3>Lisbon</h3>"))
                await group.triggerGracefulShutdown()
                while let buffer = try await iterator.next() { received += String(buffer: buffer) }
                #expect(received.hasSuffix("0\r\n\r\n"))  // the stream ended as a complete response
            }
        }
    }

    @Test("a tab's page names its live path and version and loads the host's script; other paths are not live")
    func page() async throws {
        let (_, web) = try await ghostWeb()
        try await Application(router: web.router()).test(.router) { client in
            let page = try await client.get("/dashboard").body
            #expect(page.contains("<body data-live=\"/dashboard\" data-version=\""))
            #expect(page.contains("<script src=\"/live.js\" defer></script>"))
            let script = try await client.get("/live.js")
            #expect(script.status == 200 && script.body.contains("new EventSource"))
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(try await client.get("/live?page=/graph/x").status == 404)
        }
    }
}
