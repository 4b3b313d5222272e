internal import Mosaic

extension ModuleGraph {
    /// Checks every contribution against the host's extension points: the point exists and takes the content
    /// contributed, identifiers are unique in a point, and each point gets as many contributions as its
    /// cardinality allows. What passes is kept in each node's `contributions`, for the kernel to mediate.
    mutating func checkContributions(points declared: [AnyExtensionPoint]) {
        for point in declared {
            guard let existing = points[point.id] else {
                points[point.id] = point
                continue
            }
            if existing != point {
                report(
                    .duplicateContribution, .error, [],
                    "The host declares the extension point \(point.id) twice, as \(existing) and as \(point); the "
                        + "first is used.",
                    fix: "Give the host's own point an identifier of its own, outside the mosaic. namespace.")
            }
        }
        var claims: [String: [(node: Int, declaration: ContributionDeclaration)]] = [:]
        let tabs = Set(
            nodes.indices.filter { nodes[$0].fault == nil }.flatMap { index in
                nodes[index].registrar.contributions.filter { $0.point.id == ExtensionPoint.tabs.id }.map(\.id)
            })
        for index in nodes.indices where nodes[index].fault == nil {
            for declaration in nodes[index].registrar.contributions {
                guard let tab = declaration.metadata.tab, !tabs.contains(tab) else { continue }
                let id = nodes[index].id
                let known = tabs.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
                report(
                    .unknownTab, .error, [id],
                    "\(id) contributes \"\(declaration.id)\" as a page of the tab \"\(tab)\", which no module "
                        + "declares; the tabs are: \(tabs.isEmpty ? "none" : known).",
                    fix: "Name one of those tabs in \(declaration.id)'s `tab:`, or declare the tab "
                        + "(module.tab(\"\(tab)\")).")
            }
        }
        for index in nodes.indices where nodes[index].fault == nil {
            for declaration in nodes[index].registrar.contributions
            where declaration.metadata.tab.map(tabs.contains) ?? true && accepts(declaration, from: index, claims) {
                claims[declaration.point.id, default: []].append((index, declaration))
            }
        }
        for point in declared where points[point.id] == point {
            let claimants = (claims[point.id] ?? []).sorted {
                point.order.precedes(
                    $0.declaration.keys(module: nodes[$0.node].id), $1.declaration.keys(module: nodes[$1.node].id))
            }
            let kept = checkCardinality(point, claimants)
            for (node, declaration) in kept { nodes[node].contributions.append(declaration) }
        }
    }

    /// Whether `declaration` of the module at `index` may join its point; reports why not.
    private mutating func accepts(
        _ declaration: ContributionDeclaration, from index: Int,
        _ claims: [String: [(node: Int, declaration: ContributionDeclaration)]]
    ) -> Bool {
        let id = nodes[index].id
        let target = declaration.point
        guard let point = points[target.id] else {
            let closest = points.keys.min { editDistance(target.id, $0) < editDistance(target.id, $1) }
            report(
                .unknownExtensionPoint, .warning, [id],
                "\(id) contributes \"\(declaration.id)\" to \(target.id), which this host does not declare; "
                    + "the contribution is ignored.",
                fix: "Declare \(target.id) in the host (Kernel(extensionPoints:))"
                    + (closest.map { ", or contribute to \($0) if that was meant." } ?? "."))
            return false
        }
        guard point.contentType == target.contentType else {
            report(
                .contentTypeMismatch, .error, [id],
                "\(id) contributes \(target.contentTypeName) to \(point.id), which takes \(point.contentTypeName).",
                fix: "Contribute \(point.contentTypeName) to \(point.id), or use the point that takes "
                    + "\(target.contentTypeName).", fault: true)
            return false
        }
        if let earlier = claims[point.id]?.first(where: { $0.declaration.id == declaration.id }) {
            let other = nodes[earlier.node].id
            report(
                .duplicateContribution, .error, [id, other],
                "\(other == id ? "\(id) contributes" : "\(other) and \(id) both contribute") \"\(declaration.id)\" "
                    + "to \(point.id)\(other == id ? " twice" : "").",
                fix: "Give each contribution to \(point.id) its own identifier, such as \"\(id).\(declaration.id)\".",
                fault: true)
            return false
        }
        return true
    }

    /// The claimants `point` keeps under its cardinality: all, or the first in the point's order when it takes
    /// at most one. Reports every violation.
    private mutating func checkCardinality(
        _ point: AnyExtensionPoint, _ claimants: [(node: Int, declaration: ContributionDeclaration)]
    ) -> [(node: Int, declaration: ContributionDeclaration)] {
        guard !point.cardinality.admits(claimants.count) else { return claimants }
        guard let first = claimants.first else {
            report(
                .cardinalityViolated, .error, [],
                "\(point.id) takes \(point.cardinality) contribution, but no module contributes to it.",
                fix: "Add a module that contributes to \(point.id), or relax its cardinality.")
            return []
        }
        let winner = nodes[first.node].id
        for extra in claimants.dropFirst() {
            let id = nodes[extra.node].id
            report(
                .cardinalityViolated, .error, [id, winner],
                "\(winner) and \(id) both contribute to \(point.id), which takes \(point.cardinality); "
                    + "\(winner)'s comes first and is kept, \(id) cannot run.",
                fix: "Keep one module's contribution to \(point.id) (remove the other, or make it a separate point).",
                fault: true)
        }
        return [first]
    }
}
