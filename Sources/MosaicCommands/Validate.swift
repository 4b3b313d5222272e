public import ArgumentParser
internal import Foundation
internal import Mosaic
package import MosaicKernel

/// `validate`: every diagnostic of the host's module graph, under a host version and a set of entitlements.
public struct Validate<Host: CommandableHost>: ParsableCommand, Sendable {
    /// The command's name and help.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "validate",
            abstract: "Check the module graph without running any module; exit 1 when it has errors.",
            discussion: "Exit codes: 0 clean, 1 diagnostics with errors (warnings too with --strict), 2 usage.")
    }

    /// How diagnostics are printed.
    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// One paragraph per diagnostic, with its fix.
        case text
        /// A JSON array of diagnostics with their stable codes.
        case json
    }

    @Option(help: "Check against this host version instead of the host's own.")
    var hostVersion: String?

    @Option(name: .customLong("grant"), help: "An entitlement to grant; repeat for more (default: the host's).")
    var grants: [String] = []

    @Option(help: "text or json.")
    var format: Format = .text

    @Flag(help: "Fail (exit 1) on warnings too.")
    var strict = false

    /// Parses nothing; the arguments fill the properties.
    public init() {}

    /// Rejects a version or entitlement that cannot be read, saying how to write it.
    public func validate() throws {
        if let hostVersion, !SemanticVersion(hostVersion).isValid {
            throw ValidationError("--host-version \(hostVersion) is not a semantic version; write it as 2.3.0.")
        }
        for grant in grants {
            if let problem = Entitlement(grant).problem { throw ValidationError("--grant \(grant): \(problem)") }
        }
    }

    /// Prints the diagnostics; exits 1 when one fails the check.
    public func run() throws {
        let (text, failed) = output()
        print(text)
        if failed { throw ExitCode(1) }
    }

    /// What ``run()`` prints, and whether a diagnostic fails the check.
    package func output() -> (text: String, failed: Bool) {
        var host = Host.commandHost
        if let hostVersion { host.environment.version = SemanticVersion(hostVersion) }
        let granted = grants.isEmpty ? host.entitlements : Set(grants.map { Entitlement($0) })
        let diagnostics =
            Kernel.validate(
                host.catalog, host: host.environment, entitlements: .granted(granted), services: host.services,
                standard: host.standard, extensionPoints: host.extensionPoints)
            + Kernel.configurationDiagnostics(of: host.graph, from: host.options.configurationProviders)
        let (text, failed) = DiagnosticsOutput.render(diagnostics, json: format == .json, strict: strict)
        let onDemand = host.graph.ids.compactMap { id -> String? in
            let triggers = host.graph.startTriggers(of: id)
            return triggers.isEmpty ? nil : "\(id) starts on demand, on: \(triggers.joined(separator: "; "))."
        }
        guard format == .text, !onDemand.isEmpty else { return (text, failed) }
        return ((onDemand + [text]).joined(separator: "\n"), failed)
    }
}

/// How `validate` prints diagnostics, the host's and `mosaic validate DIR`'s alike.
package enum DiagnosticsOutput {
    /// The text (or JSON) for `diagnostics`, and whether one fails the check: an error, or a warning when `strict`.
    package static func render(_ diagnostics: [Diagnostic], json: Bool, strict: Bool) -> (text: String, failed: Bool) {
        let failed = !diagnostics.filter(atLeast: strict ? .warning : .error).isEmpty
        guard json else { return (text(diagnostics), failed) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(diagnostics.map(DiagnosticRecord.init))) ?? Data("[]".utf8)
        return (String(decoding: data, as: UTF8.self), failed)
    }

    static func text(_ diagnostics: [Diagnostic]) -> String {
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.filter { $0.severity == .warning }.count
        let lines = diagnostics.map { diagnostic in
            "\(diagnostic.severity) [\(diagnostic.code)] \(diagnostic.message)\n  fix: \(diagnostic.fix)"
                + (diagnostic.location.map { "\n  at: \($0)" } ?? "")
        }
        return
            (lines + ["\(errors) error(s), \(warnings) warning(s), \(diagnostics.count - errors - warnings) note(s)."])
            .joined(separator: "\n")
    }
}

/// A diagnostic as `validate --format json` prints it.
struct DiagnosticRecord: Codable {
    let code: String
    let severity: String
    let modules: [String]
    let message: String
    let fix: String
    let location: String?

    init(_ diagnostic: Diagnostic) {
        code = diagnostic.code.rawValue
        severity = diagnostic.severity.description
        modules = diagnostic.modules.map(\.rawValue)
        message = diagnostic.message
        fix = diagnostic.fix
        location = diagnostic.location?.description
    }
}
