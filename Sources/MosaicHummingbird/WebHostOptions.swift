/// The limits and names a ``WebHost`` and ``WebServer`` defend themselves with. The defaults suit an app served on
/// loopback; serving on a network, add the names clients reach it by to ``allowedHosts``.
public struct WebHostOptions: Sendable, Hashable {
    /// The host names the `Host` header may carry, with any port, lowercased; an IPv6 address in brackets
    /// (`[::1]`). Any other name is refused with 421, so a DNS-rebinding page cannot read or drive the app.
    public var allowedHosts: Set<String>
    /// The largest request body read, in bytes; a larger one is refused with 413.
    public var maximumBodySize: Int
    /// The most header fields a request may have; more are refused with 431.
    public var maximumHeaderCount: Int
    /// The longest header line (name and value), in bytes; a longer one is refused with 431. The whole head is
    /// bounded below it by ``maximumHeaderCount`` lines and, before any of this runs, by the HTTP parser's 80 KiB.
    public var maximumHeaderLineSize: Int
    /// How long a connection may send nothing (between requests, or in the middle of a request's head) before the
    /// server closes it.
    public var idleTimeLimit: Duration
    /// The most connections served at once; a connection beyond it is answered 503 with `Retry-After` and closed
    /// at once (and beyond twice as many, the server stops accepting until one closes).
    public var maximumConnections: Int
    /// The most connections served at once for one client address; a connection beyond it is answered 503 and
    /// closed at once, so that one client cannot hold every place. Behind a proxy every client has the proxy's
    /// address: set it to ``maximumConnections`` there, and limit clients in the proxy.
    public var maximumConnectionsPerClient: Int
    /// The slowest a request body may arrive, in bytes per second on average since its head, once
    /// ``bodyGracePeriod`` has passed; a slower one is answered 408 and its connection closed, so that clients
    /// dripping bodies cannot hold the connections.
    public var minimumBodyRate: Int
    /// How long a request body may arrive at any rate before ``minimumBodyRate`` applies.
    public var bodyGracePeriod: Duration
    /// The most live-page streams (`/live`) open at once; one more is answered 503 with `Retry-After`, and its page
    /// stays as it was loaded. Below ``maximumConnections``, so that streams never hold every connection.
    public var maximumLiveStreams: Int
    /// The most live-page streams one client address holds at once (a browser holds one per open tab page).
    public var maximumLiveStreamsPerClient: Int
    /// How long a live-page stream lasts before the host ends it; the page's script reconnects at once and is sent
    /// only what changed, so a stream left open never holds its place for ever.
    public var liveStreamMaximumAge: Duration
    /// How often a quiet live-page stream sends a comment line: how soon the host finds out that its client left
    /// (the second write after the client closed fails, and frees its place), and quieter than any proxy's read
    /// time limit (nginx's `proxy_read_timeout` is 60 s).
    public var liveStreamHeartbeat: Duration
    /// The secret an operator presents to change the app (grant or revoke an entitlement, resubmit an event).
    ///
    /// Rules:
    /// - Every change needs it, wherever the server is bound: behind a proxy on the same machine every request comes
    ///   from loopback, so an address proves nothing.
    /// - It is presented as `Authorization: Bearer <key>` (the scheme in any case), the forms' "Operator key" field,
    ///   or the cookie `GET /operator?key=<key>` sets, which also shows operators the detail pages keep from others.
    /// - Without one (`nil`) nothing changes the app over HTTP, unless ``unsafeChangesWithoutKeyOnLoopback`` is set.
    /// - Wrong keys are slowed per client: after 5 in a minute, the client is answered 429 until the minute is over.
    /// - Keep it out of command lines and logs (ghost reads it from `--operator-key-file`, or makes one at start and
    ///   prints the URL that carries it).
    public var operatorKey: OperatorKey?
    /// Lets a request to a router served on loopback change the app without the operator key; for development only.
    ///
    /// - Only a request that came through no proxy (no `Forwarded` or `X-Forwarded-*` field) is let through.
    /// - Unsafe: any program on the machine, and any proxy in front that strips those fields, may then change the app.
    public var unsafeChangesWithoutKeyOnLoopback = false

    /// The loopback names: `localhost`, `127.0.0.1` and `[::1]`.
    public static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// Options; the defaults serve on loopback with 16 KB bodies arriving at 240 bytes/s at least after 5 s, 100
    /// header fields of at most 16 KB each, a 30-second idle time limit, 512 connections (128 per client address),
    /// 256 live streams (16 per client address) of at most 10 minutes each with a heartbeat every 15 s, and no
    /// operator key. Host names are lowercased.
    public init(
        allowedHosts: Set<String> = Self.loopbackHosts, maximumBodySize: Int = 16_384, maximumHeaderCount: Int = 100,
        idleTimeLimit: Duration = .seconds(30), maximumConnections: Int = 512, operatorKey: OperatorKey? = nil,
        maximumHeaderLineSize: Int = 16_384, minimumBodyRate: Int = 240, bodyGracePeriod: Duration = .seconds(5),
        maximumConnectionsPerClient: Int = 128, maximumLiveStreams: Int = 256, maximumLiveStreamsPerClient: Int = 16,
        liveStreamMaximumAge: Duration = .seconds(600), liveStreamHeartbeat: Duration = .seconds(15)
    ) {
        self.liveStreamHeartbeat = liveStreamHeartbeat
        self.maximumLiveStreams = maximumLiveStreams
        self.maximumLiveStreamsPerClient = maximumLiveStreamsPerClient
        self.liveStreamMaximumAge = liveStreamMaximumAge
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.minimumBodyRate = minimumBodyRate
        self.bodyGracePeriod = bodyGracePeriod
        self.maximumHeaderLineSize = maximumHeaderLineSize
        self.operatorKey = operatorKey
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        self.maximumBodySize = maximumBodySize
        self.maximumHeaderCount = maximumHeaderCount
        self.idleTimeLimit = idleTimeLimit
        self.maximumConnections = maximumConnections
    }

    /// Whether `authority`, a `Host` header's value such as `localhost:8080` or `[::1]:8080`, names an allowed host.
    func allows(authority: String) -> Bool {
        allowedHosts.contains(Self.hostName(of: authority))
    }

    /// The host name of `authority`, without its port, lowercased.
    static func hostName(of authority: String) -> String {
        // Bytes, not characters: an authority is ASCII, and a character search breaks graphemes on every request.
        let lowered = authority.lowercased()
        if lowered.hasPrefix("["), let end = lowered.utf8.firstIndex(of: UInt8(ascii: "]")) {
            return String(lowered[...end])
        }
        guard let colon = lowered.utf8.firstIndex(of: UInt8(ascii: ":")) else { return lowered }
        return String(lowered[..<colon])
    }
}
