internal import Foundation
internal import HTTPTypes
internal import Hummingbird
@_spi(Hosting) internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb
internal import Synchronization

/// A page's parts inside the shell: what a live page replaces when it changes.
struct ShellRegions: Sendable, Hashable, Encodable {
    /// The document's title.
    var title: String
    /// The tabs, toolbar and menu.
    var navigation: String
    var sidebar: String
    /// The notice, if any, and the page itself.
    var main: String

    /// A digest of the regions, as the page's version: equal regions, equal versions.
    var version: String {
        // FNV-1a, 64 bits: it need only tell versions of one page apart, and is stable across runs.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for part in [title, navigation, sidebar, main] {
            for byte in part.utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            hash = (hash ^ 0xff) &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

/// A live page's regions, or the response to send instead (a 404 or a fault), which is not live.
enum LivePage: Sendable {
    case regions(ShellRegions)
    case other(WebResponse)
}

extension WebHost {
    /// Whether the page at `path` updates itself: the tabs there are now, and Modules.
    func isLive(_ path: String) -> Bool {
        path == "/modules" || kernel.contributions(for: .tabs).contains { "/\($0.id)" == path }
    }

    /// The regions of the live page at `path` now. A tab's are kept until what they show changes (see
    /// ``RenderCache``); Modules' are rebuilt, since the kernel's report has more in it than versions track.
    func livePage(_ path: String) async -> LivePage {
        guard path != "/modules" else { return await regions(of: modulesPage()) }
        let tab = String(path.dropFirst())
        return await rendered(
            "live|\(tab)",
            keepIf: {
                if case .regions = $0 { true } else { false }
            },
            render: {
                let page = await tabPage(tab)
                guard page.status == 200 else { return .other(await shell(page)) }
                return await regions(of: page)
            })
    }

    /// `page`'s regions in the shell, or the fault page when a navigation item's factory throws.
    func regions(of page: Page) async -> LivePage {
        do {
            return .regions(try await shellRegions(page))
        } catch let fault as ModuleFault {
            RenderOutcome.markFailed()
            return .other(bare(faultPage("A navigation item's factory threw", module: fault.module, fault.error)))
        } catch {
            RenderOutcome.markFailed()
            return .other(bare(faultPage("A navigation item's factory threw", module: nil, error)))
        }
    }

    /// The events that keep the page at `path` current, each a server-sent event carrying the regions as JSON
    /// with the page's version as its id: one at once unless the client already has the current version (`have`,
    /// from its URL or `Last-Event-ID`), then one whenever the regions change. A slow client skips to the newest.
    /// Ends when the reader stops, the host starts shutting down, the kernel shuts down, or the stream is
    /// ``WebHostOptions/liveStreamMaximumAge`` old (the page's script then reconnects); `onEnd` runs then, before
    /// the stream ends.
    ///
    /// With a `heartbeat`, a comment line is sent each time that long passes, unless it would displace an event
    /// not yet read: a client that left is found out by the write that fails (its place is freed), and a proxy's
    /// read time limit never cuts a quiet page.
    ///
    /// Every stream of one page shares its renders (``LiveFeeds``): a change is rendered once, whoever follows it.
    package func liveEvents(
        _ path: String, have: String?, heartbeat: Duration? = nil, onEnd: @escaping @Sendable () -> Void = {}
    ) -> AsyncStream<String> {
        liveStream(path, have: have, heartbeat: heartbeat, onEnd: onEnd).events
    }

    /// ``liveEvents(_:have:heartbeat:onEnd:)``, with what stops them at once: a response's writer, whose last write
    /// failed (the client left), calls it rather than wait for the stream to notice.
    func liveStream(
        _ path: String, have: String?, heartbeat: Duration?, onEnd: @escaping @Sendable () -> Void
    ) -> (events: AsyncStream<String>, stop: @Sendable () -> Void) {
        let (events, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        let stopping = readiness.stopping()
        let page = liveFeeds.events(
            of: path, changes: { [kernel] in kernel.renderChanges() },
            render: {
                guard case .regions(let regions) = await livePage(path) else { return nil }
                let version = regions.version
                return LiveEvent(version: version, text: Self.event(regions, version: version))
            })
        // Deadlines from the stream's start, whenever its tasks begin to wait.
        let (clock, start) = (self.clock, self.clock.now())
        let end = start + options.liveStreamMaximumAge
        let sender = LiveSender(continuation)
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in stopping {}
                }
                group.addTask {
                    try? await clock.sleep(end)
                }
                group.addTask {
                    var current = have
                    for await event in page where event.version != current {
                        current = event.version
                        sender.send(event.text)
                    }
                }
                if let heartbeat {
                    group.addTask {
                        var next = start + heartbeat
                        while (try? await clock.sleep(next)) != nil {
                            sender.heartbeat()
                            next += heartbeat
                        }
                    }
                }
                _ = await group.next()
                group.cancelAll()
            }
            onEnd()
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return (events, { task.cancel() })
    }

    /// `regions` as one server-sent event; the JSON has no line breaks, so it is one `data` line.
    static func event(_ regions: ShellRegions, version: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(regions)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "id: \(version)\nevent: regions\ndata: \(json)\n\n"
    }

    /// `GET /live?page=/dashboard&have=VERSION`: the page's events (see ``liveEvents(_:have:heartbeat:onEnd:)``). The modules'
    /// middleware sees the request as a request for the page, so a middleware that guards the page guards its
    /// events too.
    ///
    /// A client holds at most ``WebHostOptions/maximumLiveStreamsPerClient`` streams and the host at most
    /// ``WebHostOptions/maximumLiveStreams``: one more is answered 503 with `Retry-After` (the page still works; it
    /// stops updating itself), so that streams never hold every connection.
    func liveResponse(_ request: Request, from client: String) async -> Response {
        let query = (try? QueryItem.items(parsing: request.uri.query ?? "")) ?? []
        let path = query.first { $0.name == "page" }?.value ?? ""
        guard isLive(path) else {
            return Self.hummingbird(
                bare(
                    problemPage(
                        status: 404, "No such live page", "Name a tab's path or /modules, as in /live?page=/dashboard.")
                ))
        }
        let have = Self.field("last-event-id", of: request) ?? query.first { $0.name == "have" }?.value
        var head = request.head
        head.path = path
        let allowed = await respond(Request(head: head, body: request.body)) { _ in Self.liveAllowed }
        guard allowed.status == .ok, allowed.headers[.contentType] == Self.liveAllowed.contentType else {
            return allowed
        }
        var headers = allowed.headers
        // The stream's length is not known: the empty stand-in's `Content-Length: 0` would end it at once.
        headers[.contentLength] = nil
        headers[.cacheControl] = "no-store"
        if let refusal = liveStreams.admit(client) {
            let limit =
                switch refusal {
                case .serverFull: "The host holds as many live streams as it serves (\(liveStreams.maximum))"
                case .clientFull:
                    "This client holds as many live streams as one client may (\(liveStreams.maximumPerClient))"
                }
            var refused = bare(
                problemPage(status: 503, "Too many live streams", limit + "; close a page, or reload in a moment."))
            refused.headers["Retry-After"] = Self.retryAfter
            return Self.hummingbird(refused)
        }
        let (events, stop) = liveStream(path, have: have, heartbeat: options.liveStreamHeartbeat) {
            [liveStreams] in liveStreams.release(client)
        }
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { stop() }
                // The reconnection delay, and something to read at once.
                try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                for await event in events {
                    try await writer.write(ByteBuffer(string: event))
                }
                try await writer.finish(nil)
            })
    }

    /// What the page handler answers when the modules' middleware lets a live request through.
    static let liveAllowed = WebResponse(contentType: "text/event-stream", body: "")

    /// The script of live pages, served from the host so that the Content-Security-Policy needs no inline script.
    static let liveScript = """
        // Keeps a live page of the shell current: the server sends the page's regions whenever what they show changes.
        // EventSource reconnects by itself and sends the last event's id (the page's version); the server answers with the
        // regions only when they differ from that version.
        (() => {
            const body = document.body;
            const page = body.dataset.live;
            if (!page || !window.EventSource) return;
            const query = "page=" + encodeURIComponent(page) + "&have=" + encodeURIComponent(body.dataset.version || "");
            const source = new EventSource("/live?" + query);
            source.addEventListener("regions", (event) => {
                const regions = JSON.parse(event.data);
                document.title = regions.title;
                document.querySelector("[data-region=navigation]").innerHTML = regions.navigation;
                document.querySelector("[data-region=sidebar]").innerHTML = regions.sidebar;
                document.querySelector("[data-region=main]").innerHTML = regions.main;
                body.dataset.version = event.lastEventId;
            });
        })();
        """
}

/// Sends one live stream's events and heartbeats, one at a time, so that a heartbeat never displaces an event the
/// client has not read (the stream keeps only the newest unread element).
package final class LiveSender: Sendable {
    /// A server-sent comment, which the page's script never sees: what a heartbeat sends.
    package static let heartbeat = ":\n\n"

    private let continuation: AsyncStream<String>.Continuation
    private let sending = Locked(())

    /// A sender into `continuation`, a stream buffering its newest element.
    package init(_ continuation: AsyncStream<String>.Continuation) {
        self.continuation = continuation
    }

    /// Sends `event`, in place of any unread one.
    package func send(_ event: String) {
        sending.withLock { _ in _ = continuation.yield(event) }
    }

    /// Sends a heartbeat, unless an event waits unread: that one goes instead.
    package func heartbeat() {
        sending.withLock { _ in
            if case .dropped(let unread) = continuation.yield(Self.heartbeat) { _ = continuation.yield(unread) }
        }
    }
}
