internal import Mosaic

extension GraphDrawing {
    /// The drawing as SVG, laid out by hand: one column per plan level (dependencies to the left), an arrow from
    /// each module to each module it activates after; optional edges dashed, service edges dotted.
    package var svg: String {
        var position: [ModuleID: (x: Int, y: Int)] = [:]
        for (column, ids) in columns.enumerated() {
            for (row, id) in ids.enumerated() { position[id] = (20 + column * 240, 20 + row * 70) }
        }
        var edgeText = ""
        for edge in edges {
            guard let from = position[edge.from], let to = position[edge.to] else { continue }
            let dash =
                switch edge.kind {
                case .required: ""
                case .optional: " stroke-dasharray=\"5 4\""
                case .service: " stroke-dasharray=\"2 3\""
                }
            edgeText +=
                "<line class=\"edge\" data-from=\"\(Self.escape(edge.from.rawValue))\" "
                + "data-to=\"\(Self.escape(edge.to.rawValue))\" data-kind=\"\(edge.kind.rawValue)\" "
                + "x1=\"\(from.x)\" y1=\"\(from.y + 22)\" x2=\"\(to.x + 200)\" y2=\"\(to.y + 22)\" "
                + "stroke=\"#8792a8\" marker-end=\"url(#arrow)\"\(dash)/>"
        }
        var nodeText = ""
        for id in columns.flatMap({ $0 }) {
            guard let at = position[id] else { continue }
            let state = states[id]
            let stateAttribute = state.map { " data-state=\"\($0)\"" } ?? ""
            nodeText +=
                "<g class=\"node\" data-module=\"\(Self.escape(id.rawValue))\"\(stateAttribute)>"
                + "<rect x=\"\(at.x)\" y=\"\(at.y)\" width=\"200\" height=\"44\" rx=\"8\" fill=\"\(Self.colour(state))\"/>"
                + "<text x=\"\(at.x + 10)\" y=\"\(at.y + 19)\" font-size=\"13\">\(Self.escape(id.rawValue))</text>"
                + "<text x=\"\(at.x + 10)\" y=\"\(at.y + 36)\" font-size=\"11\">\(Self.escape(versions[id] ?? ""))"
                + (state.map { " · \($0)" } ?? "") + "</text></g>"
        }
        let width = 40 + max(columns.count, 1) * 240
        let height = 40 + max(columns.map(\.count).max() ?? 1, 1) * 70
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" "
            + "viewBox=\"0 0 \(width) \(height)\" font-family=\"sans-serif\"><defs><marker id=\"arrow\" "
            + "viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
            + "<path d=\"M0,0L10,5L0,10z\" fill=\"#8792a8\"/></marker></defs>\(edgeText)\(nodeText)</svg>"
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
