internal import Mosaic

/// What the kernel should make of a module now: run it, or keep it failed or blocked.
enum Verdict: Sendable, Equatable {
    case run
    case failed(reason: String)
    /// `cause` is the original reason at the end of a chain of blocked modules, so that a module three levels
    /// up still says what to fix.
    case blocked(by: [Blocker], reason: String, cause: String)

    var isRun: Bool { self == .run }
}

extension ModuleGraph {
    /// Decides, in dependency order, which modules may run under `policy`, given modules that failed at run time
    /// and modules on their way out; reports each module that lacks an entitlement.
    ///
    /// A module runs when it has no fault, no unmet or unavailable required dependency, and every entitlement it
    /// needs. Otherwise it is failed (its own fault) or blocked (by the entitlements and modules it waits for).
    func authorize(
        _ policy: EntitlementPolicy,
        failures: [ModuleID: String] = [:],
        leaving: Set<ModuleID> = []
    ) -> (verdicts: [ModuleID: Verdict], diagnostics: [Diagnostic]) {
        var verdicts: [ModuleID: Verdict] = [:]
        verdicts.reserveCapacity(nodes.count)
        var diagnostics: [Diagnostic] = []
        for id in ids where nodes[id]?.inCycle == true {
            verdicts[id] = .failed(reason: nodes[id]?.fault ?? "it is in a dependency cycle.")
        }
        for id in activationOrder {
            guard let node = nodes[id] else { continue }
            if let fault = node.fault ?? failures[id] {
                verdicts[id] = .failed(reason: fault)
                continue
            }
            if leaving.contains(id) {
                verdicts[id] = .blocked(
                    by: [], reason: "it is being uninstalled.", cause: "\(id) is being uninstalled.")
                continue
            }
            var blockers: [Blocker] = []
            var reasons: [String] = []
            var cause: String?
            for unmet in node.unmet {
                blockers.append(.module(unmet.id))
                reasons.append(unmet.reason)
            }
            let missing = node.manifest.entitlements.filter { !policy.grants($0) }.sorted()
            if !missing.isEmpty {
                let list = missing.map { "'\($0)'" }.joined(separator: ", ")
                let sentence = "it needs the entitlement\(missing.count == 1 ? "" : "s") \(list), not granted."
                blockers += missing.map { .entitlement($0) }
                reasons.append(sentence)
                diagnostics.append(
                    Diagnostic(
                        .missingEntitlement, .warning, modules: [id],
                        message: "\(id) needs the entitlement\(missing.count == 1 ? "" : "s") \(list), which the host "
                            + "has not granted; it stays blocked.",
                        fix: "Grant \(list) to run \(id), or leave it blocked."))
            }
            for dependency in node.required {
                switch verdicts[dependency] {
                case .run?, nil: continue
                case .failed(let reason)?:
                    blockers.append(.module(dependency))
                    reasons.append("it requires \(dependency), which failed.")
                    cause = cause ?? "\(dependency) failed: \(reason)"
                case .blocked(_, _, let dependencyCause)?:
                    blockers.append(.module(dependency))
                    reasons.append("it requires \(dependency), which is blocked.")
                    cause = cause ?? dependencyCause
                }
            }
            if blockers.isEmpty {
                verdicts[id] = .run
            } else {
                let reason = reasons.joined(separator: " ") + (cause.map { " Cause: \($0)" } ?? "")
                verdicts[id] = .blocked(
                    by: blockers, reason: reason, cause: cause ?? "\(id): \(reasons.joined(separator: " "))")
            }
        }
        return (verdicts, diagnostics)
    }
}
