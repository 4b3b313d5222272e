internal import Foundation
package import Mosaic

/// A module canvas: everything a module provides and needs, read from its manifest and its registration alone
/// (no module code beyond `register(in:)` runs), as sections of facts that render as Markdown or HTML.
package struct ModuleCanvas: Sendable {
    /// One titled list of facts; an empty list renders as "none".
    package struct Section: Sendable {
        /// The section's heading.
        package let title: String
        /// Its facts, one line each.
        package let items: [String]
    }

    /// The module's identifier.
    package let module: ModuleID
    /// The sections, in reading order.
    package let sections: [Section]

    /// The canvas of module `id` in `graph`, or `nil` when the graph has no such module.
    package init?(of id: ModuleID, in graph: ModuleGraph) {
        guard let manifest = graph.manifest(of: id), let registration = graph.registration(of: id) else { return nil }
        module = id
        let edges = graph.edges
        let scheme = graph.host.schemes.sorted().first ?? "app"
        let compatibility = manifest.compatibility
        func edgeText(_ edge: ModuleGraph.Edge, _ other: ModuleID) -> String {
            let version =
                edge.kind == .service
                ? ""
                : manifest.dependencies.first { $0.id == other }.map {
                    " \($0.versions)"
                } ?? ""
            return "\(other)\(edge.from == id ? version : "") (\(edge.kind.rawValue))"
        }
        let points = Dictionary(grouping: registration.contributions, by: \.point.id)
        sections = [
            Section(title: "Identity", items: ["\(id) \(manifest.version.text)"]),
            Section(
                title: "Compatibility",
                items: ["host \(compatibility.host)"] + compatibility.platforms.map(\.description)
                    + compatibility.features.sorted().map { "host feature \($0)" }),
            Section(title: "Entitlements", items: manifest.entitlements.sorted().map(\.name)),
            Section(
                title: "Starts",
                items: registration.activation == .atBoot
                    ? ["at boot"] : ["on demand"] + graph.startTriggers(of: id).map { "started by \($0)" }),
            Section(
                title: "Dependencies",
                items: edges.filter { $0.from == id }.map { edgeText($0, $0.to) }
                    + manifest.dependencies.filter { dependency in
                        !edges.contains { $0.from == id && $0.to == dependency.id }
                    }
                    .map { "\($0) (not in the graph)" }),
            Section(title: "Dependents", items: edges.filter { $0.to == id }.map { edgeText($0, $0.from) }),
            Section(
                title: "Services provided",
                items: registration.services.provided.map { "\($0.key) (\($0.scope)\($0.eager ? ", eager" : ""))" }),
            Section(
                title: "Services used",
                items: registration.services.used.map { key in
                    let from = graph.provider(of: key).map { $0.module.map { " from \($0)" } ?? " from the host" }
                    return "\(key)" + (from ?? " (no provider)")
                }),
            Section(
                title: "Contributions",
                items: points.keys.sorted().map { point in
                    "\(point): "
                        + (points[point] ?? []).map { "\($0.id) (priority \($0.priority))" }
                        .joined(separator: ", ")
                }),
            Section(
                title: "Deeplinks",
                items: registration.deeplinks.map { handler in
                    "\(scheme)://<tab>/\(handler.feature)" + (handler.action.map { "/\($0)" } ?? "")
                        + (handler.navigatesOnly ? " (navigates only)" : "")
                }),
            Section(title: "Events published", items: registration.interactions.published),
            Section(title: "Events subscribed", items: registration.interactions.subscribed),
            Section(title: "State keys written", items: registration.interactions.written),
            Section(title: "State keys read", items: registration.interactions.read),
            Section(
                title: "Configuration keys",
                items: registration.configurationKeys.map { Self.describe($0, of: id) }),
        ]
    }

    /// A configuration key as the canvas lists it: full name, kind, default or "required", "secret", and the
    /// environment variable that sets it. A secret's default is never shown, nor any value the host supplies.
    static func describe(_ key: AnyConfigurationKey, of id: ModuleID) -> String {
        let components =
            id.rawValue.split(separator: ".").map(String.init) + key.name.split(separator: ".").map(String.init)
        var facts = [key.kind.rawValue]
        switch (key.defaultValue, key.isSecret) {
        case (nil, _): facts.append("required")
        case (.some, true): facts.append("has a default")
        case (.some(let value), false): facts.append("default \(value)")
        }
        if key.isSecret { facts.append("secret") }
        return "\(components.joined(separator: ".")) (\(facts.joined(separator: ", "))) · environment "
            + Kernel.environmentName(components)
    }

    /// The canvas as Markdown.
    package var markdown: String {
        var text = "# \(module)\n"
        for section in sections {
            text += "\n## \(section.title)\n\n"
            text += section.items.isEmpty ? "none\n" : section.items.map { "- \($0)\n" }.joined()
        }
        return text
    }

    /// The canvas as an HTML fragment, each section with `data-section` naming it.
    package var html: String {
        var text = "<article class=\"canvas\" data-module=\"\(Self.escape(module.rawValue))\">"
        text += "<h1>\(Self.escape(module.rawValue))</h1>"
        for section in sections {
            text += "<section data-section=\"\(Self.escape(section.title))\"><h2>\(Self.escape(section.title))</h2>"
            text +=
                section.items.isEmpty
                ? "<p>none</p>" : "<ul>" + section.items.map { "<li>\(Self.escape($0))</li>" }.joined() + "</ul>"
            text += "</section>"
        }
        return text + "</article>"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
