public import Logging

/// What the kernel hands a module when it activates.
public struct ActivationContext: Sendable {
    /// The module's identifier.
    public let id: ModuleID
    /// The module's version.
    public let version: SemanticVersion
    /// The host the module runs in.
    public let host: HostEnvironment
    /// A logger labelled with the module's identifier.
    public let logger: Logger
    /// The services the module may resolve: its own, those it declared it uses, and the host's.
    public let services: Services
    /// The host's standard, when it has one.
    public let standard: (any Standard)?
    /// Every module's contributions to the host's extension points, for a module that gathers them.
    public let contributions: Contributions
    /// The event bus, publishing as this module.
    public let events: Events
    /// Shared state, writing as this module.
    public let state: SharedState
    /// What the kernel granted the module, taken back when it deactivates; `nil` outside a kernel.
    package var ledger: ModuleLedger?
    /// The module's configuration values, validated at boot (see ``ConfigurationKey``).
    public package(set) var configuration = ModuleConfiguration()

    /// Creates a context; the kernel and test harnesses do this, modules only read it.
    package init(
        id: ModuleID, version: SemanticVersion, host: HostEnvironment, logger: Logger, services: Services,
        standard: (any Standard)? = nil, contributions: Contributions = Contributions(), events: Events? = nil,
        state: SharedState? = nil
    ) {
        self.id = id
        self.version = version
        self.host = host
        self.logger = logger
        self.services = services
        self.standard = standard
        self.contributions = contributions
        self.events = events ?? Events(bus: nil, module: id)
        self.state = state ?? SharedState(store: nil, module: id)
    }

    /// The host's standard as `type`, or `nil` when there is none or it does not conform; a module that declared
    /// the requirement with ``ModuleRegistrar/requireStandard(_:)`` always gets it.
    public func standard<S>(as type: S.Type) -> S? {
        standard as? S
    }

    /// The link to `route`, in the host's scheme: `ghost://dashboard/weather/city?name=Oslo`.
    public func url(for route: some DeeplinkRoute) -> String {
        route.link(scheme: host.linkScheme).url
    }

    /// The link to `tab`, in the host's scheme: `ghost://weather`.
    public func url(forTab tab: String) -> String {
        Deeplink(scheme: host.linkScheme, tab: tab).url
    }

    /// Starts `operation` as work that lives exactly as long as the module is active.
    ///
    /// ```swift
    /// context.task {
    ///     for await envelope in context.events.subscribe(to: FeatureOpened.self) { … }
    /// }
    /// ```
    /// When the module deactivates (or fails, or is uninstalled), the kernel cancels the work and waits for it to
    /// end before the module's `deactivate()` runs, so nothing it does outlives the module. The work runs with the
    /// module's services (for `@Injected`); an error it throws is logged with the module's logger. Started while the
    /// module is already on its way out, it does not start (and a warning says so).
    public func task(_ operation: @escaping @Sendable () async throws -> Void) {
        let services = services
        let logger = logger
        let id = id
        let work: @Sendable () async -> Void = {
            do {
                try await services.call(operation)
            } catch is CancellationError {
            } catch {
                logger.error("a task of \(id) threw", metadata: ["error": "\(error)"])
            }
        }
        guard let ledger else {
            Task { await work() }
            return
        }
        if !ledger.task(work) {
            logger.warning("\(id) started a task while deactivating; it was not started")
        }
    }

    /// Runs module code the host asked for (a link handler, a content build) as a call of the module: refused
    /// once the module is on its way out, and awaited before its `deactivate()` runs.
    package func call<R>(_ operation: () async throws -> R) async throws -> R {
        guard let ledger else { return try await services.call(operation) }
        guard ledger.beginCall() else {
            throw ModuleUnavailableError(
                module: id,
                message: "\(id) is deactivating, so it takes no more calls; try again once it is active again.")
        }
        defer { ledger.endCall() }
        return try await services.call(operation)
    }
}

/// Why a module's code was not run: the module is no longer active.
public struct ModuleUnavailableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The module.
    public let module: ModuleID
    /// What happened and what to do.
    public let message: String
    /// The value as text, for messages and logs.
    public var description: String { message }
}
