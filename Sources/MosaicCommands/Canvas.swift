public import ArgumentParser
internal import Mosaic
internal import MosaicKernel

/// `canvas`: what a module provides and needs, from its manifest and registration alone.
public struct Canvas<Host: CommandableHost>: ParsableCommand, Sendable {
    /// The command's name and help.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "canvas",
            abstract: "Print module canvases: identity, dependencies, services, contributions, links, events, state.")
    }

    /// The canvas's language.
    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// Markdown.
        case markdown
        /// An HTML fragment.
        case html
    }

    @Argument(help: "The module's identifier; every module when left out.")
    var module: String?

    @Option(help: "markdown or html.")
    var format: Format = .markdown

    /// Parses nothing; the arguments fill the properties.
    public init() {}

    /// Prints the canvases.
    public func run() throws {
        print(try output(), terminator: "")
    }

    /// What ``run()`` prints.
    package func output() throws -> String {
        var text = ""
        let graph = Host.commandHost.graph
        let ids = module.map { [ModuleID($0)] } ?? graph.ids
        for id in ids {
            guard let canvas = ModuleCanvas(of: id, in: graph) else {
                throw ValidationError(
                    "\(id) is not in the catalog; use one of: " + graph.ids.map(\.rawValue).joined(separator: ", ")
                        + ".")
            }
            text += (format == .markdown ? canvas.markdown : canvas.html) + "\n"
        }
        return text
    }
}
