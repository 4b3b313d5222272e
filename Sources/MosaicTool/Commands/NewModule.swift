package import ArgumentParser
internal import Mosaic

/// `mosaic new module ID`: a module package that builds and whose test passes as generated.
package struct NewModule: ParsableCommand {
    /// The command's name and help.
    package static let configuration = CommandConfiguration(
        commandName: "module",
        abstract: "Scaffold a module package: interface target, module, a MosaicTesting test and a README.",
        discussion: "The package depends on Mosaic by path. Without --mosaic-path that path is "
            + "\(MosaicLocation.defaultPath): a checkout named mosaic beside the new package; the tool cannot know "
            + "where Mosaic is checked out, so pass --mosaic-path to point at yours. The directory must be new or "
            + "empty; nothing is overwritten.")

    @Argument(help: "The module's reverse-DNS identifier, such as com.acme.payments.")
    var id: String

    @Option(help: "Where to create the package (default: the identifier's last segment, in the current directory).")
    var path: String?

    @Option(help: "The Mosaic checkout the package depends on (default: \(MosaicLocation.defaultPath)).")
    var mosaicPath: String?

    /// Parses nothing; the arguments fill the properties.
    package init() {}

    /// Rejects an identifier that breaks a rule, naming the rule.
    package func validate() throws {
        let problems = ModuleID(id).problems
        guard problems.isEmpty else {
            throw ValidationError(
                "\(id) is not a module identifier: " + problems.joined(separator: "; ")
                    + ". Write it in reverse-DNS form, lowercase, such as com.acme.payments.")
        }
    }

    /// Writes the package and says what is in it.
    package func run() throws {
        print(try generate())
    }

    /// Writes the package; returns what ``run()`` prints.
    package func generate() throws -> String {
        let segment = id.split(separator: ".").last ?? Substring(id)
        let name = Scaffold.typeName(segment)
        let template = ModuleTemplate(id: id, name: name, mosaic: try MosaicLocation(mosaicPath))
        let directory = path ?? String(segment)
        let written = try Scaffold.write(template.files, into: directory)
        return "Created the module package \(name) for \(id) in \(directory):\n"
            + written.map { "  \($0)" }.joined(separator: "\n")
            + "\nNext: cd \(directory) && swift build && swift test"
    }
}
