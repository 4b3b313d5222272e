internal import Mosaic
internal import MosaicKernel

extension WebHost {
    /// The module graph as SVG: modules in columns by dependency depth (dependencies to the left), coloured by
    /// state; an arrow from each module to each module it requires, dashed when optional.
    func graphSVG() async -> String {
        let states = await kernel.states
        let manifests = catalog.entries.map(\.manifest)
        let ids = Set(manifests.map(\.id))
        let depth = Self.depths(manifests)
        var rows: [Int: Int] = [:]
        var position: [ModuleID: (x: Int, y: Int)] = [:]
        for manifest in manifests.sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            let column = depth[manifest.id] ?? 0
            let row = rows[column, default: 0]
            rows[column] = row + 1
            position[manifest.id] = (20 + column * 240, 20 + row * 70)
        }
        var edges = ""
        for manifest in manifests {
            guard let from = position[manifest.id] else { continue }
            for dependency in manifest.dependencies where ids.contains(dependency.id) {
                guard let to = position[dependency.id] else { continue }
                let dash = dependency.isOptional ? " stroke-dasharray=\"5 4\"" : ""
                edges +=
                    "<line class=\"edge\" data-from=\"\(HTML.escape(manifest.id.rawValue))\" "
                    + "data-to=\"\(HTML.escape(dependency.id.rawValue))\" x1=\"\(from.x)\" y1=\"\(from.y + 22)\" "
                    + "x2=\"\(to.x + 200)\" y2=\"\(to.y + 22)\" stroke=\"#8792a8\" marker-end=\"url(#arrow)\"\(dash)/>"
            }
        }
        var nodes = ""
        for manifest in manifests {
            guard let at = position[manifest.id] else { continue }
            let state = states[manifest.id]?.name ?? "discovered"
            nodes +=
                "<g class=\"node\" data-module=\"\(HTML.escape(manifest.id.rawValue))\" data-state=\"\(state)\">"
                + "<rect x=\"\(at.x)\" y=\"\(at.y)\" width=\"200\" height=\"44\" rx=\"8\" fill=\"\(Self.colour(state))\"/>"
                + "<text x=\"\(at.x + 10)\" y=\"\(at.y + 19)\" font-size=\"13\">\(HTML.escape(manifest.id.rawValue))</text>"
                + "<text x=\"\(at.x + 10)\" y=\"\(at.y + 36)\" font-size=\"11\">\(HTML.escape(manifest.version.text)) · "
                + "\(state)</text></g>"
        }
        let width = 40 + ((depth.values.max() ?? 0) + 1) * 240
        let height = 40 + (rows.values.max() ?? 1) * 70
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" "
            + "viewBox=\"0 0 \(width) \(height)\" font-family=\"sans-serif\"><defs><marker id=\"arrow\" "
            + "viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
            + "<path d=\"M0,0L10,5L0,10z\" fill=\"#8792a8\"/></marker></defs>\(edges)\(nodes)</svg>"
    }

    static func colour(_ state: String) -> String {
        switch state {
        case "active": "#bfe6c4"
        case "blocked": "#f7dc9c"
        case "failed": "#f2aaa5"
        default: "#d9dde5"
        }
    }

    /// Each module's depth: 0 without dependencies in the catalog, else one more than its deepest dependency.
    /// A cycle (which validation reports) is cut where it closes.
    static func depths(_ manifests: [Manifest]) -> [ModuleID: Int] {
        let byID = Dictionary(manifests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var depth: [ModuleID: Int] = [:]
        var visiting: Set<ModuleID> = []
        func visit(_ id: ModuleID) -> Int {
            if let known = depth[id] { return known }
            guard let manifest = byID[id], visiting.insert(id).inserted else { return 0 }
            let deepest = manifest.dependencies.filter { byID[$0.id] != nil }.map { visit($0.id) + 1 }.max() ?? 0
            visiting.remove(id)
            depth[id] = deepest
            return deepest
        }
        for manifest in manifests { _ = visit(manifest.id) }
        return depth
    }
}
