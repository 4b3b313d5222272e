package import ArgumentParser

/// `mosaic new host NAME`: an executable host with the Mosaic commands embedded and its module list.
package struct NewHost: ParsableCommand {
    /// The command's name and help.
    package static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Scaffold a host package: an executable with the Mosaic commands and its module list.",
        discussion: "The package depends on Mosaic by path (default \(MosaicLocation.defaultPath), a checkout named "
            + "mosaic beside the new package; pass --mosaic-path to point at yours). The directory must be new or "
            + "empty; nothing is overwritten.")

    @Argument(help: "The host's name, a Swift type name such as Shop; the command is its lowercase form.")
    var name: String

    @Option(help: "Where to create the package (default: the name, in the current directory).")
    var path: String?

    @Option(help: "The Mosaic checkout the package depends on (default: \(MosaicLocation.defaultPath)).")
    var mosaicPath: String?

    /// Parses nothing; the arguments fill the properties.
    package init() {}

    /// Rejects a name that cannot be a Swift type and a command.
    package func validate() throws {
        let ascii = name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))
        }
        guard ascii, let first = name.unicodeScalars.first, first.properties.isAlphabetic, name.count <= 64 else {
            throw ValidationError(
                "\(name) cannot name a host: use ASCII letters and digits, starting with a letter (at most 64), "
                    + "such as Shop.")
        }
    }

    /// Writes the package and says what is in it.
    package func run() throws {
        print(try generate())
    }

    /// Writes the package; returns what ``run()`` prints.
    package func generate() throws -> String {
        let typeName = name.prefix(1).uppercased() + name.dropFirst()
        let template = HostTemplate(name: typeName, mosaic: try MosaicLocation(mosaicPath))
        let directory = path ?? typeName
        let written = try Scaffold.write(template.files, into: directory)
        return "Created the host package \(typeName) in \(directory):\n"
            + written.map { "  \($0)" }.joined(separator: "\n")
            + "\nNext: cd \(directory) && swift run \(template.command) validate"
    }
}
