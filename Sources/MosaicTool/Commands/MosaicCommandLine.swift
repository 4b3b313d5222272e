package import ArgumentParser

/// `mosaic`: what needs no host. Checks manifest files against each other and scaffolds module and host packages.
package struct MosaicCommandLine: AsyncParsableCommand {
    /// The tool's name, help and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: "mosaic",
        abstract: "Check Mosaic module manifests and scaffold module and host packages.",
        discussion: "Exit codes: 0 success, 1 diagnostics with errors (or a file that could not be written), "
            + "2 a usage error. A host's own checks run from the host: `<host> validate`, `graph`, `canvas`.",
        subcommands: [ValidateDirectory.self, New.self])

    /// Parses nothing; the subcommands do the work.
    package init() {}
}

/// `mosaic new`: scaffolds packages.
package struct New: ParsableCommand {
    /// The command's name and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Scaffold a module package or a host package.",
        subcommands: [NewModule.self, NewHost.self])

    /// Parses nothing; the subcommands do the work.
    package init() {}
}
