public import Mosaic
public import MosaicKernel
public import Testing

/// A state a test expects a module to be in; failed and blocked states can be narrowed by reason or blocker.
public enum ExpectedState: Sendable, Hashable, CustomStringConvertible {
    /// Running.
    case active
    /// Waiting on standby for its first use (an on-demand module).
    case standby
    /// Was active and has been deactivated (revoked, uninstalled or shut down).
    case deactivated
    /// Failed; when `reason` is given, the module's reason contains it.
    case failed(reason: String? = nil)
    /// Blocked; when `blocker` is given, it is among the module's blockers.
    case blocked(by: Blocker? = nil)

    /// Failed, for any reason.
    public static let failed = ExpectedState.failed()
    /// Blocked, by anything.
    public static let blocked = ExpectedState.blocked()

    /// Whether `state` is what this expects.
    public func matches(_ state: ModuleState) -> Bool {
        switch (self, state) {
        case (.active, .active), (.standby, .standby), (.deactivated, .deactivated): true
        case (.failed(let expected), .failed(let reason)): expected.map(reason.contains) ?? true
        case (.blocked(let expected), .blocked(let blockers, _)): expected.map(blockers.contains) ?? true
        default: false
        }
    }

    /// What is expected, in words, as an unmet expectation's issue prints it.
    public var description: String {
        switch self {
        case .active: "active"
        case .standby: "standby"
        case .deactivated: "deactivated"
        case .failed(let reason): reason.map { "failed with a reason containing \"\($0)\"" } ?? "failed"
        case .blocked(let blocker): blocker.map { "blocked by \($0)" } ?? "blocked"
        }
    }
}

extension TestApp {
    /// Records an issue, with the whole report, unless module `id` is in the `expected` state.
    public func expect(
        _ id: ModuleID, _ expected: ExpectedState, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let report = await report()
        guard let entry = report[id] else {
            let known = report.modules.map(\.id.rawValue).joined(separator: ", ")
            Issue.record("\(id) is not in this test (it has \(known)).", sourceLocation: sourceLocation)
            return
        }
        guard !expected.matches(entry.state) else { return }
        Issue.record(
            "\(id) is \(entry.state), expected \(expected).\n\n\(report.table)", sourceLocation: sourceLocation)
    }

    /// Records an issue, with the whole report, unless the kernel reports a diagnostic with `code` (about
    /// `module`, when given).
    public func expectDiagnostic(
        _ code: Diagnostic.Code, about module: ModuleID? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let report = await report()
        let found = report.diagnostics.contains { $0.code == code && (module.map($0.modules.contains) ?? true) }
        guard !found else { return }
        let subject = module.map { " about \($0)" } ?? ""
        Issue.record(
            "No \(code) diagnostic\(subject).\n\n\(report.table)", sourceLocation: sourceLocation)
    }

    /// Records an issue unless module `id`, once deactivated (revoked, uninstalled or shut down), left nothing of its
    /// own alive: no object of its Swift module's types that it held as it began to deactivate (its instance, its
    /// built services and what they store, three levels deep), and not its ledger. The issue names each type still
    /// alive and how many, and what the kernel still holds for the module; when the kernel holds nothing, something
    /// outside it does (a global, a cache, a task that never ended, another module).
    ///
    /// ```swift
    /// try await app.revoke("weather")
    /// await app.expectReleased("com.ghost.weather")
    /// ```
    public func expectReleased(_ id: ModuleID, sourceLocation: SourceLocation = #_sourceLocation) async {
        guard var alive = await kernel.unreleased(id) else {
            Issue.record(
                "\(id) has not deactivated in this test: revoke, uninstall or shut it down first.",
                sourceLocation: sourceLocation)
            return
        }
        // A task the module's deactivation waited for (cancelled, or ended) lets go of what its closure held only
        // once it is done, which may be a moment after the wait: the other tasks get their turns first, and with
        // many tests in parallel on two cores a thousand turns were seen not to be enough. A leak stays whatever
        // they do.
        for _ in 0..<10_000 where !alive.isEmpty {
            await Task.yield()
            alive = await kernel.unreleased(id) ?? []
        }
        guard !alive.isEmpty else { return }
        let holdings = await kernel.holdings(of: id)
        let objects = alive.map { "\($0.count) × \($0.type)" }.joined(separator: ", ")
        let held =
            holdings.isEmpty
            ? "nothing for it, so something outside the kernel keeps them (a global, a cache, a task that never "
                + "ended, another module)"
            : holdings.joined(separator: "; ")
        Issue.record(
            "\(id) left \(objects) alive after it deactivated. The kernel holds \(held).",
            sourceLocation: sourceLocation)
    }

    /// Records an issue, with the whole report, unless every module is active and nothing was reported.
    public func expectClean(sourceLocation: SourceLocation = #_sourceLocation) async {
        let report = await report()
        guard !report.isClean else { return }
        Issue.record("The modules did not all start cleanly.\n\n\(report.table)", sourceLocation: sourceLocation)
    }
}
