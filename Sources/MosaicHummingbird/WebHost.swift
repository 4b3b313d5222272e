public import Logging
public import Mosaic
public import MosaicKernel
internal import MosaicWeb

/// A web shell over a kernel: its regions are the built-in extension points, filled with the active modules'
/// contributions in mediated order; plus pages that show the system (modules, graph, settings).
///
/// Every module-provided string is escaped. The host's defences fail closed: a request naming a host outside
/// ``WebHostOptions/allowedHosts`` is refused; every state-changing request (`POST`, `PUT`, `PATCH`, `DELETE`), to
/// the host or to a module's route, must carry the page's token or come provably from the host's own pages; a link
/// whose handler persists state is applied only by a `POST` (a `GET` shows a page that confirms); a module factory
/// that throws answers 500; server faults show an error id whose details go to the log; every response carries
/// the security headers.
///
/// The host renders by version: a region, and each contribution's content, is built again only when the
/// contribution lists, the granted entitlements, a module's state, or a shared-state key it read while building
/// has changed, so content should be a function of shared state (data a module keeps elsewhere shows at the next
/// such change). Open tab pages and Modules update themselves through server-sent events from `/live`.
public struct WebHost: Sendable {
    /// The kernel being served; the host boots and shuts it down.
    public let kernel: Kernel
    /// The modules, for the graph and the entitlements the settings page offers.
    public let catalog: ModuleCatalog
    /// The scheme of the app's deeplinks, such as `ghost`.
    public let scheme: String
    /// The app's name, in page titles.
    public let title: String
    /// The names the host answers to and the limits it keeps.
    public let options: WebHostOptions
    /// Where server faults are logged, each with its error id and module.
    public let logger: Logger
    /// The token every form carries: 32 random bytes as 64 hex digits, per host, so another site cannot forge a
    /// form post.
    package let csrfToken: String
    /// Required modules, health-check limits and the `/metrics` text (see `WebHost+Health.swift`).
    public let operations: OperationsOptions
    /// Whether the host is starting, ready or stopping, for `/health/ready`.
    package let readiness = Readiness()
    /// What the host rendered, kept until what it depended on changes.
    let renders = RenderCache()
    /// The entitlements the modules name, found once: the catalog does not change while the host serves it.
    let declaredEntitlements: Set<Entitlement>
    /// The wrong operator keys each client presented lately.
    let keyAttempts: KeyAttempts
    /// The open live streams of each page, which share its renders.
    let liveFeeds = LiveFeeds()
    /// The live streams held, in all and per client.
    let liveStreams: ConnectionCounts
    /// The clock of time limits and ages: ``OperationsOptions/clock``.
    let clock: KernelClock
    /// The modules' health checks, run at most once a second for `/health/ready`.
    let healthChecks: HealthCheckRuns

    /// A host for `kernel`, whose modules `catalog` lists; it draws a fresh form token each time it is made.
    ///
    /// Pass ``extensionPoints`` to the kernel too, or module routes, middleware and tab pages do not validate.
    /// `scheme` is the app's link scheme (`/open?url=ghost://…`), one the kernel's `HostEnvironment` accepts.
    public init(
        kernel: Kernel, catalog: ModuleCatalog, scheme: String, title: String, options: WebHostOptions = .init(),
        logger: Logger = Logger(label: "mosaic.web"), operations: OperationsOptions = .init()
    ) {
        self.operations = operations
        self.kernel = kernel
        self.catalog = catalog
        self.scheme = scheme
        self.title = title
        self.options = options
        self.logger = logger
        declaredEntitlements = catalog.declaredEntitlements
        keyAttempts = KeyAttempts(clock: operations.clock)
        liveStreams = ConnectionCounts(
            maximum: options.maximumLiveStreams, maximumPerClient: options.maximumLiveStreamsPerClient)
        clock = KernelClock(operations.clock)
        healthChecks = HealthCheckRuns(clock: clock)
        var generator = SystemRandomNumberGenerator()
        csrfToken = Self.hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The extension points the web host adds to the built-in ones; pass them to the kernel.
    public static var extensionPoints: [AnyExtensionPoint] { WebPoints.all }

    /// Every entitlement a module asks for, and every one granted now, sorted.
    func knownEntitlements(granted: Set<Entitlement>) -> [Entitlement] {
        declaredEntitlements.union(granted).sorted()
    }

    /// `bytes` as lowercase hex, two digits a byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }
}
