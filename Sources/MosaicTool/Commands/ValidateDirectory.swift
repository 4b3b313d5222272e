package import ArgumentParser
internal import Mosaic
internal import MosaicCommands
internal import MosaicKernel

/// `mosaic validate DIR`: the manifest files in a directory, checked against each other as a host would.
package struct ValidateDirectory: ParsableCommand {
    /// The command's name and help.
    package static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check the module manifest files (*.json) in a directory against each other.",
        discussion: "Checks what the manifests alone say: identifiers, versions, dependencies and their version "
            + "ranges, cycles, host compatibility and entitlements. Services and contributions are declared in "
            + "code; check them with the host's own `validate`. A file that cannot be read or parsed is a "
            + "diagnostic naming it. Exit codes: 0 clean, 1 diagnostics with errors (warnings too with --strict), "
            + "2 usage.")

    /// How diagnostics are printed.
    package enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// One paragraph per diagnostic, with its fix.
        case text
        /// A JSON array of diagnostics with their stable codes.
        case json
    }

    @Argument(help: "The directory that holds the manifest files (subdirectories are not read).")
    var directory: String

    @Option(help: "The version of the host the modules will run in, such as 2.3.0.")
    var hostVersion: String

    @Option(name: .customLong("grant"), help: "An entitlement to grant; repeat for more (default: every one named).")
    var grants: [String] = []

    @Option(name: .customLong("feature"), help: "A feature the host offers; repeat for more.")
    var features: [String] = []

    @Option(help: "text or json.")
    var format: Format = .text

    @Flag(help: "Fail (exit 1) on warnings too.")
    var strict = false

    /// Parses nothing; the arguments fill the properties.
    package init() {}

    /// Rejects a version or entitlement that cannot be read, saying how to write it.
    package func validate() throws {
        if !SemanticVersion(hostVersion).isValid {
            throw ValidationError("--host-version \(hostVersion) is not a semantic version; write it as 2.3.0.")
        }
        for grant in grants {
            if let problem = Entitlement(grant).problem { throw ValidationError("--grant \(grant): \(problem)") }
        }
    }

    /// Prints the diagnostics; exits 1 when one fails the check.
    package func run() throws {
        let (text, failed) = output()
        print(text)
        if failed { throw ExitCode(1) }
    }

    /// What ``run()`` prints, and whether a diagnostic fails the check.
    package func output() -> (text: String, failed: Bool) {
        var catalog = ModuleCatalog()
        catalog.discoverManifests(in: directory)
        let granted = grants.isEmpty ? catalog.declaredEntitlements : Set(grants.map { Entitlement($0) })
        let diagnostics = Kernel.validate(
            catalog, host: HostEnvironment(version: SemanticVersion(hostVersion), features: Set(features)),
            entitlements: .granted(granted))
        return DiagnosticsOutput.render(diagnostics, json: format == .json, strict: strict)
    }
}
