public import Logging
internal import Synchronization

/// What the kernel hands a module when it activates.
///
/// A context is copied into every closure that serves the module (its job, handlers, participants, tasks), so it
/// keeps its fields in one external storage object: a copy is one reference, not a dozen.
public struct ActivationContext: Sendable {
    /// What every context of one kernel shares, made once: each context holds one reference to it instead of a
    /// copy of the host (whose copy retained ten references).
    package final class Shared: Sendable {
        let host: HostEnvironment
        let standard: (any Standard)?

        package init(host: HostEnvironment, standard: (any Standard)?) {
            self.host = host
            self.standard = standard
        }
    }

    private final class Storage: Sendable {
        let id: ModuleID
        let version: SemanticVersion
        let shared: Shared
        /// Made on first use: most modules never log, and making a logger calls the host's logging factory.
        private let madeLogger = Locked<Logger?>(nil)
        let services: Services
        let contributions: Contributions
        let events: Events
        let state: SharedState
        let ledger: ModuleLedger?
        let configuration: ModuleConfiguration

        init(
            id: ModuleID, version: SemanticVersion, shared: Shared, services: Services, contributions: Contributions,
            events: Events, state: SharedState, ledger: ModuleLedger?, configuration: ModuleConfiguration
        ) {
            self.id = id
            self.version = version
            self.shared = shared
            self.services = services
            self.contributions = contributions
            self.events = events
            self.state = state
            self.ledger = ledger
            self.configuration = configuration
        }

        /// The module's logger, the same one on every read.
        var logger: Logger {
            if let logger = madeLogger.withLock({ $0 }) { return logger }
            // Made outside the lock: the factory is the host's code.
            let made = Logger(label: id.rawValue)
            return madeLogger.withLock { logger in
                if let logger { return logger }
                logger = made
                return made
            }
        }
    }

    private let storage: Storage

    /// The module's identifier.
    public var id: ModuleID { storage.id }
    /// The module's version.
    public var version: SemanticVersion { storage.version }
    /// The host the module runs in.
    public var host: HostEnvironment { storage.shared.host }
    /// A logger labelled with the module's identifier.
    public var logger: Logger { storage.logger }
    /// The services the module may resolve: its own, those it declared it uses, and the host's.
    public var services: Services { storage.services }
    /// The host's standard, when it has one.
    public var standard: (any Standard)? { storage.shared.standard }
    /// Every module's contributions to the host's extension points, for a module that gathers them.
    public var contributions: Contributions { storage.contributions }
    /// The event bus, publishing as this module.
    public var events: Events { storage.events }
    /// Shared state, writing as this module.
    public var state: SharedState { storage.state }
    /// What the kernel granted the module, taken back when it deactivates; `nil` outside a kernel.
    package var ledger: ModuleLedger? { storage.ledger }
    /// The module's configuration values, validated at boot (see ``ConfigurationKey``).
    public var configuration: ModuleConfiguration { storage.configuration }

    /// Creates a context; the kernel and test harnesses do this, modules only read it.
    package init(
        id: ModuleID, version: SemanticVersion, shared: Shared, services: Services, contributions: Contributions,
        events: Events, state: SharedState, ledger: ModuleLedger?, configuration: ModuleConfiguration
    ) {
        storage = Storage(
            id: id, version: version, shared: shared, services: services, contributions: contributions,
            events: events, state: state, ledger: ledger, configuration: configuration)
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
                .deactivating, module: id,
                message: "\(id) is deactivating, so it takes no more calls; try again once it is active again.")
        }
        defer { ledger.endCall() }
        return try await services.call(operation)
    }
}

/// Why a module's code was not run: the module is no longer active, or could not be started on demand.
public struct ModuleUnavailableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: the one thing to decide on, never the message's text.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The module is deactivating: it takes no more calls. Try again once it is active again.
        case deactivating
        /// The module waited on standby and could not be started for this use: the message says why.
        case notStarted = "not-started"
        /// The module runs in a process of its own, and that process ended (a trap, a signal, an exit) before it
        /// answered: the module is failed, and restarts within the host's budget.
        case processEnded = "process-ended"
    }

    /// The kind of failure.
    public let code: Code
    /// The module.
    public let module: ModuleID
    /// What happened and what to do.
    public let message: String
    /// The value as text, for messages and logs.
    public var description: String { message }

    package init(_ code: Code, module: ModuleID, message: String) {
        self.code = code
        self.module = module
        self.message = message
    }
}
