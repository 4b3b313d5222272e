public import Mosaic
public import MosaicKernel
internal import Synchronization

/// The modules of a ``TestHarness``, running in their own kernel: drive them as the app would, and observe.
public final class TestApp: Sendable {
    /// The kernel, for anything this type does not wrap.
    public let kernel: Kernel
    /// The report of the boot.
    public let bootReport: BootReport
    /// The required modules the harness stood in for, because the test did not load them.
    public let standIns: [ModuleID]
    private let navigationLog: Navigations
    private let scratch: ScratchDirectory?

    init(
        kernel: Kernel, bootReport: BootReport, standIns: [ModuleID], navigations: Navigations,
        scratch: ScratchDirectory?
    ) {
        self.kernel = kernel
        self.bootReport = bootReport
        self.standIns = standIns
        self.navigationLog = navigations
        self.scratch = scratch
    }

    /// The report as it stands now.
    public func report() async -> BootReport { await kernel.report() }

    /// The state of module `id` now; `nil` for a module the test does not have.
    public func state(of id: ModuleID) async -> ModuleState? { await kernel.state(of: id) }

    /// The service `key` names, resolved as the host would (any provider, no declaration needed).
    public func resolve<T: Sendable>(_ key: ServiceKey<T>) async throws(ServiceError) -> T {
        try await kernel.services.resolve(key)
    }

    // MARK: Contributions

    /// What active modules contribute to `point`, in the order the host shows it.
    public func contributions<Content>(for point: ExtensionPoint<Content>) -> [Contribution<Content>] {
        kernel.contributions(for: point)
    }

    /// The contents of `point`'s contributions, built as the host would.
    public func contents<Content>(of point: ExtensionPoint<Content>) async throws -> [Content] {
        try await kernel.allContributions.values(of: point)
    }

    // MARK: Phases, host events, deeplinks

    /// Runs lifecycle `phase` through the active modules.
    @discardableResult
    public func run(_ phase: LifecyclePhase) async throws -> DispatchReport { try await kernel.run(phase) }

    /// Sends the host event `event` to the active modules that listen to its kind.
    @discardableResult
    public func send(_ event: HostEvent) async throws -> DispatchReport { try await kernel.send(event) }

    /// Opens `text` as a deeplink: the result says whether it was handled, by which module, or why not.
    public func open(_ text: String) async -> DeeplinkResult { await kernel.open(text) }

    /// Opens a parsed or typed link.
    public func open(_ link: Deeplink) async -> DeeplinkResult { await kernel.open(link) }

    /// Every tab the kernel navigated to, in order.
    public var navigations: [String] { navigationLog.all }

    // MARK: State and events

    /// Shared state, as the host: it may write every key.
    public var sharedState: SharedState { kernel.sharedState }

    /// The event bus, as the host: subscribe to see what modules publish, publish to drive them.
    public var events: Events { kernel.events }

    // MARK: Changes

    /// Grants `entitlement`; the modules it held back activate before this returns.
    public func grant(_ entitlement: Entitlement) async throws { try await kernel.grant(entitlement) }

    /// Revokes `entitlement`; the modules that need it deactivate before this returns.
    public func revoke(_ entitlement: Entitlement) async throws { try await kernel.revoke(entitlement) }

    /// Deactivates every module, dependents first, and removes the temporary state directory the harness made.
    public func shutdown() async {
        await kernel.shutdown()
        scratch?.remove()
    }
}

/// The tabs the kernel navigated to.
final class Navigations: Sendable {
    private let tabs = Locked<[String]>([])
    func append(_ tab: String) { tabs.withLock { $0.append(tab) } }
    var all: [String] { tabs.withLock { $0 } }
}
