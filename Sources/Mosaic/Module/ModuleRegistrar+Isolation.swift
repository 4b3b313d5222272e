package import Foundation

/// Something a module declares that cannot cross to a process of its own, with the fix.
package struct CrossingProblem: Sendable, Hashable {
    /// What cannot cross, as the rest of a sentence that starts with the module's name.
    package let problem: String
    /// What the author or the host does about it.
    package let fix: String
}

extension ModuleRegistrar {
    /// The declarations of this module as a host keeps them when the module runs in another process: each
    /// contribution's content is what `content` brings from there, encoded, each link is handled there by `open`,
    /// and each lifecycle phase and host event the module takes part in is run there by `dispatch`. Services stay
    /// in the module's process (each is built and used there); whatever cannot cross is in ``crossingProblems``,
    /// which the validator reports and fails the module with rather than run it half.
    package func remote(
        content: @escaping @Sendable (_ point: String, _ id: String, _ call: Data?) async throws -> Data,
        open: @escaping @Sendable (_ link: Deeplink) async throws -> Void,
        dispatch: @escaping @Sendable (_ phase: LifecyclePhase?, _ event: HostEvent?) async throws -> Void
    ) -> ModuleRegistrar {
        var remote = ModuleRegistrar()
        remote.activation = activation
        remote.standardRequirements = standardRequirements
        remote.configurationKeys = configurationKeys
        remote.interactions = interactions
        remote.crossingProblems = crossingProblems(content)
        remote.runsInOwnProcess = true
        remote.contributions = contributions.compactMap { $0.remote(content) }
        // One stand-in per phase and per kind of event: the module's process runs all of its own for it.
        remote.participants = Set(participants.map(\.phase)).sorted { $0.name < $1.name }.map { phase in
            PhaseParticipant(phase: phase) { _ in try await dispatch(phase, nil) }
        }
        remote.listeners = Set(listeners.map(\.kind)).sorted { $0.name < $1.name }.map { kind in
            HostEventListener(kind: kind) { event, _ in try await dispatch(nil, event) }
        }
        remote.deeplinks = deeplinks.map { handler in
            DeeplinkHandler(
                feature: handler.feature, action: handler.action, entitlement: handler.entitlement,
                navigatesOnly: handler.navigatesOnly, handle: { link, _ in try await open(link) })
        }
        return remote
    }

    private func crossingProblems(
        _ content: @escaping @Sendable (_ point: String, _ id: String, _ call: Data?) async throws -> Data
    ) -> [CrossingProblem] {
        let inProcess = "or run the module in process"
        var problems: [CrossingProblem] = []
        for declaration in contributions where declaration.remote(content) == nil {
            problems.append(
                CrossingProblem(
                    problem: "contributes '\(declaration.id)' to \(declaration.point.id), whose content "
                        + "\(declaration.point.contentTypeName) is neither Codable nor CallableContent, and cannot "
                        + "cross to its process",
                    fix: "Make \(declaration.point.contentTypeName) Codable (or CallableContent), \(inProcess)."))
        }
        let provided = Set(services.provided.map(\.key))
        let used = Set(services.used + contributions.flatMap(\.dependencies)).subtracting(provided)
        for key in used.sorted() {
            problems.append(
                CrossingProblem(
                    problem: "uses the service \(key), which its process does not have (services do not cross "
                        + "the boundary: each is built and used in one process)",
                    fix: "Provide \(key) in the module itself, \(inProcess)."))
        }
        let crossing = Dictionary(interactions.eventTypes.map { ($0.name, $0) }) { first, _ in first }
        for name in Set(interactions.published + interactions.subscribed).sorted() where crossing[name] == nil {
            problems.append(
                CrossingProblem(
                    problem: "publishes or subscribes to \(name), which is not Codable, so its events cannot cross "
                        + "to its process", fix: "Make \(name) Codable, \(inProcess)."))
        }
        return problems
    }
}
