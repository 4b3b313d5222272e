internal import Logging
public import Mosaic

/// What ``Kernel/bisect(_:)`` found: the module a failing check goes with, and each step that found it.
public struct Bisection: Sendable, Hashable, CustomStringConvertible {
    /// One run of the check.
    public struct Step: Sendable, Hashable {
        /// The modules held off while the check ran (with them, the modules that require them).
        public let heldOff: [ModuleID]
        /// Whether the check passed.
        public let passed: Bool
    }

    /// The module the failure goes with: the check fails while it is active and passes while it is held off.
    /// `nil` when the check passed with every module active (there is nothing to find).
    public let module: ModuleID?
    /// Every run of the check, in order; the first with nothing held off.
    public let steps: [Step]

    /// The finding, then one line per step.
    public var description: String {
        let finding =
            module.map { "the check fails with \($0) active and passes without it" }
            ?? "the check passes with every module active: nothing to find"
        let lines = steps.enumerated().map { number, step in
            let held = step.heldOff.isEmpty ? "nothing" : step.heldOff.map(\.rawValue).joined(separator: ", ")
            return "  \(number + 1). held off \(held): \(step.passed ? "passed" : "failed")"
        }
        return ([finding] + lines).joined(separator: "\n")
    }
}

extension Bisection {
    /// Searches `suspects` (in dependency order) for the module behind a failing check: holds off the later half
    /// through `holdOff`, runs `check`, and keeps the half the failure goes with, until one module is left. Holds
    /// nothing off at the end. What ``Kernel/bisect(_:)`` runs, and a host's tool over its control plane.
    public static func search<Failure: Error>(
        _ suspects: [ModuleID], holdOff: @Sendable (Set<ModuleID>) async throws(Failure) -> Void,
        check: @Sendable () async -> Bool
    ) async throws(Failure) -> Bisection {
        var steps = [Step(heldOff: [], passed: await check())]
        guard !steps[0].passed else { return Bisection(module: nil, steps: steps) }
        var suspects = suspects
        do {
            while suspects.count > 1 {
                let half = Array(suspects.suffix(suspects.count / 2))
                try await holdOff(Set(half))
                let passed = await check()
                steps.append(Step(heldOff: half, passed: passed))
                suspects = passed ? half : Array(suspects.dropLast(half.count))
            }
        } catch {
            try? await holdOff([])
            throw error
        }
        try await holdOff([])
        return Bisection(module: suspects.first, steps: steps)
    }
}

extension Kernel {
    /// Finds the module behind a failing `check`, and returns it with the steps that found it.
    ///
    /// - Halves of the active modules are held off live (no restart), and `check` runs after each change.
    /// - Every module is then brought back as it was: a module held off is deactivated, and activated again at the
    ///   end.
    ///
    /// ```swift
    /// let found = try await kernel.bisect { await pageRenders() }   // true: the check passes
    /// print(found)   // the check fails with com.vendor.reports active and passes without it …
    /// ```
    ///
    /// `check` returns whether the app behaves; it runs outside the kernel's one-at-a-time operations, so it may
    /// use the kernel. The modules are halved in dependency order, the later half held off, so that holding off a
    /// half stops no module of the other: the active modules of an app of `n` are searched in at most
    /// ⌈log2 n⌉ + 1 checks. The check must fail with every module active to begin with.
    ///
    /// - Throws: ``KernelError`` when the kernel is not running.
    public func bisect(_ check: @Sendable () async -> Bool) async throws(KernelError) -> Bisection {
        try requireRunning()
        let found = try await Bisection.search(
            activeModulesInOrder, holdOff: { [self] (ids) async throws(KernelError) in try await self.holdOff(ids) },
            check: check)
        logger.info(
            "bisection done", metadata: ["module": "\(found.module?.rawValue ?? "")", "checks": "\(found.steps.count)"])
        return found
    }

    /// The active modules, each after the modules it depends on: what a bisection searches.
    public var activeModulesInOrder: [ModuleID] {
        graph.order.filter { records[$0].isActive }.map { graph.nodes[$0].id }
    }

    /// Holds off exactly the modules `ids` (and so the modules that require them), live, and returns once the
    /// others have settled; none brings back every module that was active before the first hold, on demand or
    /// not. What a bisection does at each step (``bisect(_:)``, or a host's tool over its control plane).
    ///
    /// - Throws: ``KernelError`` when the kernel is not running or a module is unknown.
    public func holdOff(_ ids: Set<ModuleID>) async throws(KernelError) {
        try await exclusively { () async throws(KernelError) in
            try requireRunning()
            if let unknown = ids.first(where: { graph.position[$0] == nil }) {
                throw KernelError(
                    .unknownModule, "No module \(unknown) is installed; nothing was held off.", module: unknown)
            }
            if heldOff.isEmpty, !ids.isEmpty { activeBeforeHold = activeModulesInOrder }
            heldOff = ids
            if ids.isEmpty {
                for id in activeBeforeHold { if let index = graph.position[id] { records[index].demanded = true } }
                activeBeforeHold = []
            }
            await reconcile()
        }
    }
}
