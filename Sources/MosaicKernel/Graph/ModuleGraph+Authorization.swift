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
    /// Decides, in dependency order, which modules may run under `policy`, given modules that failed at run time,
    /// modules on their way out and modules a bisection holds off: one verdict per position in ``nodes``. Reports each module that lacks an
    /// entitlement.
    ///
    /// A module runs when it has no fault, no unmet or unavailable required dependency, and every entitlement it
    /// needs. Otherwise it is failed (its own fault) or blocked (by the entitlements and modules it waits for).
    func verdicts(
        under policy: EntitlementPolicy,
        failures: [ModuleID: String] = [:],
        leaving: Set<ModuleID> = [],
        heldOff: Set<ModuleID> = []
    ) -> (verdicts: [Verdict], diagnostics: [Diagnostic]) {
        var verdicts = [Verdict?](repeating: nil, count: nodes.count)
        // Whether each module may run so far, read for every dependency: a verdict is many times its size, and
        // the verdicts of a large graph do not fit in the caches.
        var runs = [Bool](repeating: true, count: nodes.count)
        var diagnostics: [Diagnostic] = []
        // Whether a module has nothing of its own that can keep it from running (no fault, no unmet dependency, no
        // entitlement), read in position order: the walk below goes level by level, each level all over memory, and
        // most modules then need only their dependencies' flags.
        var plain = [Bool](repeating: false, count: nodes.count)
        for index in nodes.indices {
            if nodes[index].inCycle {
                verdicts[index] = .failed(reason: nodes[index].fault ?? "it is in a dependency cycle.")
                runs[index] = false
            }
            plain[index] =
                nodes[index].fault == nil && nodes[index].unmet.isEmpty && self[manifestAt: index].entitlements.isEmpty
        }
        let noneLeftOut = failures.isEmpty && leaving.isEmpty && heldOff.isEmpty
        for index in order {
            if noneLeftOut, plain[index], !required[index].contains(where: { !runs[$0] }) {
                verdicts[index] = .run
                continue
            }
            // Read where needed: most modules run, and copying an identifier retains its text.
            var id: ModuleID { nodes[index].id }
            if let fault = nodes[index].fault ?? (failures.isEmpty ? nil : failures[id]) {
                verdicts[index] = .failed(reason: fault)
                runs[index] = false
                continue
            }
            if !leaving.isEmpty, leaving.contains(id) {
                runs[index] = false
                verdicts[index] = .blocked(
                    by: [], reason: "it is being uninstalled.", cause: "\(id) is being uninstalled.")
                continue
            }
            if !heldOff.isEmpty, heldOff.contains(id) {
                runs[index] = false
                verdicts[index] = .blocked(
                    by: [], reason: "it is held off while a bisection looks for a faulty module.",
                    cause: "\(id) is held off by a bisection.")
                continue
            }
            var blockers: [Blocker] = []
            var reasons: [String] = []
            var cause: String?
            for unmet in nodes[index].unmet {
                blockers.append(.module(unmet.id))
                reasons.append(unmet.reason)
            }
            let missing =
                self[manifestAt: index].entitlements.isEmpty
                ? [] : self[manifestAt: index].entitlements.filter { !policy.grants($0) }.sorted()
            if !missing.isEmpty {
                let list = missing.map { "'\($0)'" }.joined(separator: ", ")
                blockers += missing.map { .entitlement($0) }
                reasons.append("it needs the entitlement\(missing.count == 1 ? "" : "s") \(list), not granted.")
                diagnostics.append(
                    Diagnostic(
                        .missingEntitlement, .warning, modules: [id],
                        message: "\(id) needs the entitlement\(missing.count == 1 ? "" : "s") \(list), which the host "
                            + "has not granted; it stays blocked.",
                        fix: "Grant \(list) to run \(id), or leave it blocked."))
            }
            for dependency in required[index] where !runs[dependency] {
                var name: ModuleID { nodes[dependency].id }
                switch verdicts[dependency] {
                case .run?, nil: continue
                case .failed(let reason)?:
                    blockers.append(.module(name))
                    reasons.append("it requires \(name), which failed.")
                    cause = cause ?? "\(name) failed: \(reason)"
                case .blocked(_, _, let dependencyCause)?:
                    blockers.append(.module(name))
                    reasons.append("it requires \(name), which is blocked.")
                    cause = cause ?? dependencyCause
                }
            }
            if blockers.isEmpty {
                verdicts[index] = .run
            } else {
                runs[index] = false
                let reason = reasons.joined(separator: " ") + (cause.map { " Cause: \($0)" } ?? "")
                verdicts[index] = .blocked(
                    by: blockers, reason: reason, cause: cause ?? "\(id): \(reasons.joined(separator: " "))")
            }
        }
        // Every module is in a cycle or in the order, so every verdict is set.
        return (verdicts.map { $0 ?? .failed(reason: "it was not reached by planning.") }, diagnostics)
    }
}
