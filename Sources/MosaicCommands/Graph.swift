public import ArgumentParser
internal import Mosaic
internal import MosaicKernel

/// `graph`: the module graph the kernel plans by, as DOT, Mermaid or SVG.
public struct Graph<Host: CommandableHost>: AsyncParsableCommand, Sendable {
    /// The command's name and help.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "graph",
            abstract: "Draw the module graph: declared and service-inferred edges, optional ones dashed.",
            discussion: "Pipe DOT to Graphviz (dot -Tpng) or paste Mermaid into Markdown. The SVG is the one the "
                + "web host serves at /graph.")
    }

    /// The drawing's language.
    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// Graphviz DOT.
        case dot
        /// A Mermaid flowchart.
        case mermaid
        /// SVG, laid out in plan levels.
        case svg
    }

    @Option(help: "dot, mermaid or svg.")
    var format: Format = .dot

    @Flag(help: "Boot the modules (nothing is served) and colour each by its state.")
    var boot = false

    @Option(name: .customLong("module"), help: "Show only this module, what it depends on and what depends on it.")
    var focus: String?

    /// Parses nothing; the arguments fill the properties.
    public init() {}

    /// Prints the drawing.
    public func run() async throws {
        print(try await output(), terminator: "")
    }

    /// What ``run()`` prints.
    package func output() async throws -> String {
        let host = Host.commandHost
        let graph = host.graph
        var focusID: ModuleID?
        if let focus {
            guard graph.ids.contains(ModuleID(focus)) else {
                throw ValidationError(
                    "--module \(focus) is not in the catalog; use one of: "
                        + graph.ids.map(\.rawValue).joined(separator: ", ") + ".")
            }
            focusID = ModuleID(focus)
        }
        var states: [ModuleID: String] = [:]
        if boot {
            let kernel = host.kernel()
            _ = try await kernel.boot()
            states = await kernel.states.mapValues(\.name)
            await kernel.shutdown()
        }
        let drawing = GraphDrawing(graph, states: states, focus: focusID)
        switch format {
        case .dot: return drawing.dot
        case .mermaid: return drawing.mermaid
        case .svg: return drawing.svg + "\n"
        }
    }
}
