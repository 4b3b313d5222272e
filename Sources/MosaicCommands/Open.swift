public import ArgumentParser
internal import Mosaic
internal import MosaicKernel

/// `open`: boots the host's modules without serving anything, opens one link, and prints what happened.
public struct Open<Host: CommandableHost>: AsyncParsableCommand, Sendable {
    /// The command's name and help.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "open",
            abstract: "Boot the modules (nothing is served), open a link, and print who handled it.",
            discussion: "Exit codes: 0 the link was handled, 1 it was not (the reason and the fix are printed), "
                + "2 usage. Shared state is the command's own (in memory unless the host says otherwise), so the "
                + "link changes nothing a running app sees.")
    }

    @Argument(help: "The link, in the host's scheme: ghost://dashboard/weather/city?name=Oslo.")
    var link: String

    @Option(name: .customLong("grant"), help: "An entitlement to grant; repeat for more (default: the host's).")
    var grants: [String] = []

    /// Parses nothing; the arguments fill the properties.
    public init() {}

    /// Rejects an entitlement that cannot be read, saying how to write it.
    public func validate() throws {
        for grant in grants {
            if let problem = Entitlement(grant).problem { throw ValidationError("--grant \(grant): \(problem)") }
        }
    }

    /// Prints what happened to the link; exits 1 when it was not handled.
    public func run() async throws {
        let (text, handled) = try await output()
        print(text)
        if !handled { throw ExitCode(1) }
    }

    /// What ``run()`` prints, and whether the link was handled.
    package func output() async throws -> (text: String, handled: Bool) {
        let kernel = Host.commandHost.kernel(granting: grants.isEmpty ? nil : Set(grants.map { Entitlement($0) }))
        let report = try await kernel.boot()
        let result = await kernel.open(link)
        await kernel.shutdown()
        let inactive = report.modules.filter { $0.state.name != "active" }.map { "\($0.id) (\($0.state.name))" }
        let note = inactive.isEmpty ? "" : "\nnot active: " + inactive.joined(separator: ", ")
        switch result {
        case .handled(let tab, let module):
            return ("handled: tab \(tab), " + (module.map { "by \($0)" } ?? "navigation only") + note, true)
        case .notHandled(let error):
            return ("not handled [\(error.code)]: \(error.message)\n  fix: \(error.fix)" + note, false)
        }
    }
}
