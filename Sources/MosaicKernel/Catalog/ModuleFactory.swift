public import Mosaic

/// How the kernel creates a module: its manifest, and a function that makes an instance.
///
/// Made from a module type (`ModuleFactory(WeatherModule.self)`), or from a manifest and a closure when the
/// instance needs configuration or the manifest is computed (as in generated test graphs).
public struct ModuleFactory: Sendable {
    /// The manifest of the modules this factory makes. (The catalog alone changes it: see
    /// ``ModuleCatalog/add(_:origin:)``.)
    public internal(set) var manifest: Manifest
    /// Makes a fresh instance; called only after validation, once per activation.
    public let make: @Sendable () -> any Module
    /// Declares what the module provides and uses (with the uses of its `@Injected` properties); called once,
    /// before validation.
    public let register: @Sendable (inout ModuleRegistrar) -> Void
    /// The module type, when made from one; two factories of one type are the same module.
    let type: ObjectIdentifier?
    /// A name for messages: the type's name, or "a custom factory".
    let name: String

    /// A factory for a module type: the type's static manifest and its `init()`.
    public init<M: Module>(_ type: M.Type) {
        self.manifest = M.manifest
        self.make = { M() }
        self.register = { registrar in
            M.register(in: &registrar)
            // The module's `@Injected` properties declare their uses: an instance made only to read them.
            for key in InjectedUses.recorded(while: { _ = M() }) { registrar.services.use(key) }
        }
        self.type = ObjectIdentifier(type)
        self.name = qualifiedTypeName(type)
    }

    /// A factory for a module type known only as an existential, such as an entry of a `ModuleGroup`.
    public init(module: any Module.Type) {
        func open<M: Module>(_ type: M.Type) -> ModuleFactory { ModuleFactory(type) }
        self = open(module)
    }

    /// `original` with other declarations and instances: the same module, as a host runs it in another process.
    init(
        isolating original: ModuleFactory, register: @escaping @Sendable (inout ModuleRegistrar) -> Void,
        make: @escaping @Sendable () -> any Module
    ) {
        self.manifest = original.manifest
        self.make = make
        self.register = register
        self.type = original.type
        self.name = original.name
    }

    /// A factory for a manifest and a closure that makes a configured instance, with what it registers.
    public init(
        manifest: Manifest,
        register: @escaping @Sendable (inout ModuleRegistrar) -> Void = { _ in },
        make: @escaping @Sendable () -> any Module
    ) {
        self.manifest = manifest
        self.make = make
        self.register = register
        self.type = nil
        self.name = "the factory of \(manifest.id)"
    }
}
