public import ArgumentParser
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
    /// The options the commands that boot (`graph --boot`, `open`) create the kernel with. Leave
    /// ``KernelOptions/stateDirectory`` `nil` so that they keep shared state in memory and never touch the app's data.
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

/// The embeddable command set: `validate`, `graph`, `modules` and `canvas` on a host's real catalog, without
/// serving anything.
///
/// ```swift
/// static let configuration = CommandConfiguration(
///     subcommands: [Serve.self] + MosaicCommands.all(for: GhostHost.self), defaultSubcommand: Serve.self)
/// ```
/// Exit codes: 0 clean, 1 diagnostics with errors (or warnings under `--strict`), 64 for a usage error
/// (swift-argument-parser's code).
public enum MosaicCommands {
    /// Every command, for `Host`.
    public static func all<Host: CommandableHost>(for host: Host.Type) -> [any ParsableCommand.Type] {
        [Validate<Host>.self, Graph<Host>.self, Modules<Host>.self, Canvas<Host>.self]
    }
}
