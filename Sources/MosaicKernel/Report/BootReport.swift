public import Logging
public import Mosaic

/// Every module's state, why it is not active when it is not, how long it took to activate, and every problem
/// the kernel knows of. ``table`` renders it for people; ``log(to:)`` writes it as log lines.
public struct BootReport: Sendable {
    /// One module's line.
    public struct Entry: Sendable, Hashable {
        /// The module.
        public let id: ModuleID
        /// Its version.
        public let version: SemanticVersion
        /// Where it was listed or found.
        public let origin: ModuleCatalog.Origin
        /// Its state when the report was made.
        public let state: ModuleState
        /// How long its last `activate` ran, when it ran.
        public let activationTime: Duration?
        /// How long its participants took in the last run of each lifecycle phase.
        public let phaseTimes: [LifecyclePhase: Duration]
        /// Why it was last activated (boot, a grant, an install, a dependency, a use), when it was.
        public var cause: ActivationCause? = nil
        /// What starts it, in words, while it waits on standby (empty in every other state).
        public var startTriggers: [String] = []
        /// Its process, restarts and last crash, when it runs in a process of its own.
        public var process: IsolatedModuleStatus? = nil

        /// Where its code runs, when that is a process of its own: `process 4242, 1 restart`; empty otherwise.
        public var processSummary: String {
            guard let process else { return "" }
            let restarts = process.restarts == 1 ? "1 restart" : "\(process.restarts) restarts"
            return "process " + (process.processIdentifier.map { "\($0)" } ?? "(none now)") + ", " + restarts
        }

        /// Why it is failed or blocked, or what starts it while it waits on standby: `starts on: a link to team`;
        /// empty in every other state.
        public var explanation: String {
            state.reason ?? (startTriggers.isEmpty ? "" : "starts on: " + startTriggers.joined(separator: "; "))
        }
    }

    /// The modules, in catalog order.
    public let modules: [Entry]
    /// Every problem, most severe first, in discovery order within a severity.
    public let diagnostics: [Diagnostic]
    /// How long boot took: validation, planning and activation.
    public let duration: Duration

    init(modules: [Entry], diagnostics: [Diagnostic], duration: Duration) {
        self.modules = modules
        self.diagnostics = diagnostics.enumerated()
            .sorted { ($0.element.severity, $1.offset) > ($1.element.severity, $0.offset) }
            .map(\.element)
        self.duration = duration
    }

    /// The entry of module `id`.
    public subscript(id: ModuleID) -> Entry? {
        modules.first { $0.id == id }
    }

    /// How many modules are in the state named `name` (`active`, `failed`, `blocked`…).
    public func count(_ name: String) -> Int {
        modules.count { $0.state.name == name }
    }

    /// Whether every module is active or on standby, and no diagnostic is an error or a warning.
    public var isClean: Bool {
        modules.allSatisfy { $0.state.isActive || $0.state == .standby }
            && diagnostics.allSatisfy { $0.severity == .note }
    }

    /// "5 modules: 3 active, 1 failed, 1 blocked · booted in 4.1 ms".
    public var summary: String {
        let names = [
            "active", "standby", "deactivated", "failed", "blocked", "authorized", "validated", "discovered",
        ]
        let counts = names.compactMap { name in count(name) > 0 ? "\(count(name)) \(name)" : nil }
        return "\(modules.count) module\(modules.count == 1 ? "" : "s"): \(counts.joined(separator: ", "))"
            + " · booted in \(Self.format(duration))"
    }

    /// Writes one line per module (info when active, warning otherwise), one per diagnostic, and the summary.
    public func log(to logger: Logger) {
        // Skip building metadata for ten thousand lines nobody will see; above warnings, skip every module.
        if logger.logLevel <= .warning {
            for module in modules where logger.logLevel <= (module.state.reason == nil ? .info : .warning) {
                var metadata: Logger.Metadata = [
                    "module": "\(module.id)", "version": "\(module.version)",
                    "state": "\(module.state.name)",
                ]
                if let time = module.activationTime { metadata["activation"] = "\(Self.format(time))" }
                if let reason = module.state.reason {
                    metadata["reason"] = "\(reason)"
                    logger.warning("module not active", metadata: metadata)
                } else {
                    logger.info("module \(module.state.name)", metadata: metadata)
                }
            }
        }
        for diagnostic in diagnostics where diagnostic.severity > .note {
            logger.log(level: diagnostic.severity == .error ? .error : .warning, "\(diagnostic)")
        }
        logger.info("\(summary)")
    }

    /// A duration in the unit that reads best: `850 µs`, `12.3 ms`, `2.10 s`.
    static func format(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.bounded.components
        let seconds = Double(whole) + Double(attoseconds) * 1e-18
        if seconds < 1e-3 { return "\(Int((seconds * 1e6).rounded())) µs" }
        if seconds < 1 { return String(Int((seconds * 1e4).rounded())).insertingDecimal(places: 1) + " ms" }
        return String(Int((seconds * 100).rounded())).insertingDecimal(places: 2) + " s"
    }
}

extension String {
    /// "123" with 1 place → "12.3"; pads with zeros as needed.
    fileprivate func insertingDecimal(places: Int) -> String {
        let padded = String(repeating: "0", count: Swift.max(0, places + 1 - count)) + self
        return "\(padded.dropLast(places)).\(padded.suffix(places))"
    }
}
