public import ArgumentParser
internal import Foundation
public import Mosaic
public import MosaicKernel

/// What the commands need to know about a host: its catalog (code modules and manifest files), what it is, what it
/// grants and what it offers, everything the kernel would be created with, so that the commands check the real app.
public struct CommandHost: Sendable {
    /// The modules, from code and manifest files.
    public var catalog: ModuleCatalog
    /// The host the modules run in.
    public var environment: HostEnvironment
    /// The entitlements a default install grants.
    public var entitlements: Set<Entitlement>
    /// The host's extension points beyond the built-in ones.
    public var extensionPoints: [AnyExtensionPoint]
    /// The services the host itself provides.
    public var services: ServiceRegistrar
    /// The host standard modules may require, if the host offers one.
    public var standard: (any Standard)?
    /// The options the commands that boot (`graph --boot`, `open`) create the kernel with; `validate` checks the
    /// modules' configuration keys against its `configurationProviders`. Leave
    /// `KernelOptions.stateDirectory` `nil` so that they keep shared state in memory and never touch the app's data.
    public var options: KernelOptions

    /// A host description with the parts the kernel is created with.
    public init(
        catalog: ModuleCatalog, environment: HostEnvironment, entitlements: Set<Entitlement> = [],
        extensionPoints: [AnyExtensionPoint] = [], services: ServiceRegistrar = ServiceRegistrar(),
        standard: (any Standard)? = nil, options: KernelOptions = KernelOptions()
    ) {
        self.catalog = catalog
        self.environment = environment
        self.entitlements = entitlements
        self.extensionPoints = extensionPoints
        self.services = services
        self.standard = standard
        self.options = options
    }

    /// The validated graph of the catalog on this host.
    public var graph: ModuleGraph {
        ModuleGraph(
            catalog: catalog, host: environment, services: services, standard: standard,
            extensionPoints: extensionPoints)
    }

    /// A kernel for this host with `entitlements` granted (the host's own by default); nothing activates before
    /// `boot()`.
    package func kernel(granting entitlements: Set<Entitlement>? = nil) -> Kernel {
        Kernel(
            catalog: catalog, host: environment, entitlements: .granted(entitlements ?? self.entitlements),
            services: services, standard: standard, extensionPoints: extensionPoints, options: options)
    }
}

/// A host the Mosaic commands can run against: a type that describes it.
public protocol CommandableHost {
    /// The host, as the commands see it.
    static var commandHost: CommandHost { get }
}

/// The embeddable command set: `validate`, `graph`, `modules`, `canvas` and `open` on a host's real catalog,
/// without serving anything.
///
/// ```swift
/// @main
/// struct Ghost: AsyncParsableCommand {
///     static let configuration = CommandConfiguration(
///         subcommands: [Serve.self] + MosaicCommands.all(for: GhostHost.self), defaultSubcommand: Serve.self)
///
///     static func main() async { await MosaicCommands.main(Ghost.self) }
/// }
/// ```
///
/// Exit codes, when the host's entry is ``main(_:arguments:)``: 0 clean, 1 diagnostics with errors (or warnings
/// under `validate --strict`) or a link that was not handled, 2 a usage error (an unknown option, a bad value, a
/// module that is not in the catalog). A host that keeps swift-argument-parser's own entry gets 64 for a usage
/// error instead.
public enum MosaicCommands {
    /// Every command, for `Host`.
    public static func all<Host: CommandableHost>(for host: Host.Type) -> [any ParsableCommand.Type] {
        [Validate<Host>.self, Graph<Host>.self, Modules<Host>.self, Canvas<Host>.self, Open<Host>.self]
    }

    /// The exit code of a usage error: an option, argument or value that cannot be used, with the fix printed.
    public static let usageExitCode: Int32 = 2

    /// The exit code `error` ends `command` with: swift-argument-parser's, except 2 (``usageExitCode``) where it
    /// would give 64 for a usage error.
    public static func exitCode<Root: ParsableCommand>(for error: any Error, in command: Root.Type) -> Int32 {
        let code = command.exitCode(for: error)
        return code == .validationFailure ? usageExitCode : code.rawValue
    }

    /// Parses the process's arguments (or `arguments`) into `command` or one of its subcommands, runs it, and
    /// exits: 0 when it returns, else the code ``exitCode(for:in:)`` gives, after printing the error's message
    /// (help to standard output, anything else to standard error), as swift-argument-parser's own entry does.
    public static func main<Root: AsyncParsableCommand>(_ command: Root.Type, arguments: [String]? = nil) async -> Never
    {
        do {
            var parsed = try await command.asyncParseAsRoot(arguments)
            if var asyncCommand = parsed as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try parsed.run()
            }
            exit(0)
        } catch {
            let message = command.fullMessage(for: error)
            let code = exitCode(for: error, in: command)
            if !message.isEmpty {
                if code == 0 {
                    print(message)
                } else {
                    FileHandle.standardError.write(Data((message + "\n").utf8))
                }
            }
            exit(code)
        }
    }
}
