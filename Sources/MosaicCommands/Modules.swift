public import ArgumentParser
internal import Mosaic
internal import MosaicKernel

/// `modules`: every module of the catalog with its version, plan level and dependencies.
public struct Modules<Host: CommandableHost>: ParsableCommand, Sendable {
    /// The command's name and help.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "modules", abstract: "List the modules in activation order, with what each depends on.")
    }

    /// Parses nothing; there are no arguments.
    public init() {}

    /// Prints the list.
    public func run() throws {
        let graph = Host.commandHost.graph
        let edges = graph.edges
        let order = graph.activationOrder + graph.ids.filter { !graph.activationOrder.contains($0) }
        for id in order {
            let level = graph.level(of: id).map { "level \($0)" } ?? "in a cycle"
            let needs = edges.filter { $0.from == id }.map { "\($0.to) (\($0.kind.rawValue))" }
            print(
                "\(id) \(graph.manifest(of: id)?.version.text ?? "") · \(level)"
                    + (needs.isEmpty ? "" : " · after \(needs.joined(separator: ", "))"))
        }
    }
}
