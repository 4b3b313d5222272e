internal import Foundation
package import Mosaic

/// The module graph drawn as Graphviz DOT, Mermaid or SVG, from the graph's plan: its levels and its
/// ``ModuleGraph/edges`` (declared and service-inferred). `mosaic graph` and the web host's `/graph` both draw
/// with it, so they show the same graph.
package struct GraphDrawing: Sendable {
    /// The modules drawn, in columns: one per plan level, then one for modules in cycles.
    package let columns: [[ModuleID]]
    /// The edges drawn.
    package let edges: [ModuleGraph.Edge]
    /// Each module's version text, followed by `on demand` for a module that starts on demand and `own process`
    /// for one that runs in a process of its own.
    package let versions: [ModuleID: String]
    /// Each module's state name, when the host booted.
    package let states: [ModuleID: String]

    /// The drawing of `graph`, coloured by `states` when given, showing only `focus`, what it depends on and
    /// what depends on it when `focus` is given.
    package init(_ graph: ModuleGraph, states: [ModuleID: String] = [:], focus: ModuleID? = nil) {
        var shown = Set(graph.ids)
        if let focus {
            shown = Self.reach(from: focus, graph.edges.map { ($0.from, $0.to) })
                .union(Self.reach(from: focus, graph.edges.map { ($0.to, $0.from) }))
        }
        let cycle = graph.ids.filter { graph.level(of: $0) == nil }
        columns = (graph.levels + [cycle]).map { $0.filter(shown.contains) }.filter { !$0.isEmpty }
        edges = graph.edges.filter { shown.contains($0.from) && shown.contains($0.to) }
        versions = Dictionary(
            graph.ids.compactMap { id in
                graph.manifest(of: id).map { manifest in
                    let registration = graph.registration(of: id)
                    let onDemand = registration?.activation == .onDemand ? " on demand" : ""
                    let isolated = registration?.runsInOwnProcess == true ? " own process" : ""
                    return (id, manifest.version.text + onDemand + isolated)
                }
            },
            uniquingKeysWith: { first, _ in first })
        self.states = states
    }

    private static func reach(from start: ModuleID, _ pairs: [(ModuleID, ModuleID)]) -> Set<ModuleID> {
        var next: [ModuleID: [ModuleID]] = [:]
        for (from, to) in pairs { next[from, default: []].append(to) }
        var seen: Set<ModuleID> = [start]
        var stack = [start]
        while let id = stack.popLast() {
            for other in next[id] ?? [] where seen.insert(other).inserted { stack.append(other) }
        }
        return seen
    }

    /// The fill colour of a state.
    package static func colour(_ state: String?) -> String {
        switch state {
        case "active": "#bfe6c4"
        case "standby": "#cfe0f5"
        case "blocked": "#f7dc9c"
        case "failed": "#f2aaa5"
        default: "#d9dde5"
        }
    }

    /// Graphviz DOT: dependencies point from the dependent module; optional edges dashed, service edges dotted
    /// and labelled.
    package var dot: String {
        var lines = ["digraph modules {", "  rankdir=RL;", "  node [shape=box, style=\"rounded,filled\"];"]
        for id in columns.flatMap({ $0 }) {
            var label = "\(id.rawValue)\\n\(versions[id] ?? "")"
            if let state = states[id] { label += " · \(state)" }
            lines.append(
                "  \(Self.quoted(id.rawValue)) [label=\(Self.quoted(label)), fillcolor=\"\(Self.colour(states[id]))\"];"
            )
        }
        for edge in edges {
            let style =
                switch edge.kind {
                case .required: ""
                case .optional: " [style=dashed]"
                case .service: " [style=dotted, label=\"service\"]"
                }
            lines.append("  \(Self.quoted(edge.from.rawValue)) -> \(Self.quoted(edge.to.rawValue))\(style);")
        }
        return (lines + ["}"]).joined(separator: "\n") + "\n"
    }

    /// Mermaid flowchart text.
    package var mermaid: String {
        let ids = columns.flatMap { $0 }
        let names = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, "m\($0)") })
        var lines = ["flowchart RL"]
        for id in ids {
            let label = "\(id.rawValue) \(versions[id] ?? "")" + (states[id].map { " · \($0)" } ?? "")
            lines.append("  \(names[id] ?? "")[\"\(label.replacingOccurrences(of: "\"", with: "#quot;"))\"]")
        }
        for edge in edges {
            guard let from = names[edge.from], let to = names[edge.to] else { continue }
            let arrow =
                switch edge.kind {
                case .required: "-->"
                case .optional: "-.->"
                case .service: "-. service .->"
                }
            lines.append("  \(from) \(arrow) \(to)")
        }
        for (id, state) in states.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let name = names[id] else { continue }
            lines.append("  style \(name) fill:\(Self.colour(state))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func quoted(_ text: String) -> String {
        "\""
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\\\\n", with: "\\n") + "\""
    }
}
