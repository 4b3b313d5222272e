public import Mosaic

/// How the kernel creates a module: its manifest, and a function that makes an instance.
///
/// Made from a module type (`ModuleFactory(WeatherModule.self)`), or from a manifest and a closure when the
/// instance needs configuration or the manifest is computed (as in generated test graphs).
public struct ModuleFactory: Sendable {
    /// The manifest of the modules this factory makes.
    public let manifest: Manifest
    /// Makes a fresh instance; called only after validation, once per activation.
    public let make: @Sendable () -> any Module
    /// The module type, when made from one; two factories of one type are the same module.
    let type: ObjectIdentifier?
    /// A name for messages: the type's name, or "a custom factory".
    let name: String

    /// A factory for a module type: the type's static manifest and its `init()`.
    public init<M: Module>(_ type: M.Type) {
        self.manifest = M.manifest
        self.make = { M() }
        self.type = ObjectIdentifier(type)
        self.name = String(describing: type)
    }

    /// A factory for a manifest and a closure that makes a configured instance.
    public init(manifest: Manifest, make: @escaping @Sendable () -> any Module) {
        self.manifest = manifest
        self.make = make
        self.type = nil
        self.name = "the factory of \(manifest.id)"
    }
}
