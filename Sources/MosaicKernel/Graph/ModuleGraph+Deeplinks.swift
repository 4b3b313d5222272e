internal import Mosaic

extension ModuleGraph {
    /// Checks that each feature and action is handled by one module at most, and records who handles what.
    mutating func checkDeeplinks() {
        var owners: [DeeplinkRouter.RouteKey: Int] = [:]
        for index in nodes.indices where nodes[index].fault == nil {
            for handler in nodes[index].registrar.deeplinks {
                let key = DeeplinkRouter.RouteKey(feature: handler.feature, action: handler.action)
                let route = handler.feature + (handler.action.map { "/\($0)" } ?? " (every action)")
                guard let earlier = owners[key] else {
                    owners[key] = index
                    continue
                }
                let id = nodes[index].id
                let other = nodes[earlier].id
                report(
                    .duplicateDeeplinkHandler, .error, [id, other],
                    other == id
                        ? "\(id) handles the link \(route) twice."
                        : "\(other) and \(id) both handle the link \(route); \(other)'s is kept, \(id) cannot run.",
                    fix: "Let one module handle \(route), or give each its own action.", fault: other != id)
            }
        }
        deeplinkOwners = owners.mapValues { nodes[$0].id }
    }
}
