/// One service a module provides: its key, scope, rank, the services its factory needs, and its factories.
package struct ServiceRegistration: Sendable {
    /// The service provided.
    package let key: AnyServiceKey
    /// How long its instances live.
    package let scope: ServiceScope
    /// How it ranks against other providers of the same service.
    package let rank: ServiceRank
    /// The services its factory takes, in order.
    package let dependencies: [AnyServiceKey]
    /// Whether the kernel builds it before the module's `activate(_:)`, so that a factory that throws fails the
    /// module there; otherwise it is built on first use.
    package let eager: Bool
    /// The service's type.
    let type: any Sendable.Type
    /// Its factory, and the one for preview mode if it has one: each a `ServiceMaker` of ``type``.
    let live: any AnyObject & Sendable
    let preview: (any AnyObject & Sendable)?

    /// A registration of `T`'s service, built by `live` (and in preview mode by `preview`, if given): the key and
    /// the makers' type are both `T`'s, which a box's unchecked use of the makers relies on.
    init<T: Sendable>(
        scope: ServiceScope, rank: ServiceRank, dependencies: [AnyServiceKey], eager: Bool,
        live: ServiceMaker<T>, preview: ServiceMaker<T>?
    ) {
        self.key = AnyServiceKey(T.self)
        self.scope = scope
        self.rank = rank
        self.dependencies = dependencies
        self.eager = eager
        self.type = T.self
        self.live = live
        self.preview = preview
    }

    /// Whether it has a factory for preview mode.
    package var hasPreview: Bool { preview != nil }

    /// The box for `provider`, with the preview factory when `preview` is set and there is one.
    package func makeBox(_ provider: ModuleID, _ preview: Bool) -> ServiceBox {
        ServiceBox(
            key: key, scope: scope, provider: provider, type: type, make: preview ? self.preview ?? live : live)
    }
}

/// Where a module declares the services it provides and the ones it uses.
///
/// Declaring runs no factory: the kernel runs one when the service is first resolved, or, for a singleton or cached
/// service registered `eager`, before the module's `activate(_:)`.
///
/// ```swift
/// module.services.singleton(.weatherService) { (network: any NetworkClient) in
///     NWSWeatherService(network: network)
/// }
/// module.services.use(.locationService)
/// ```
/// A factory's parameters are its dependencies, resolved by the kernel in order; they are declared uses too.
public struct ServiceRegistrar: Sendable {
    /// The services provided, in declaration order.
    package private(set) var provided: [ServiceRegistration] = []
    /// The services used, whether by a factory or by the module's own code.
    package private(set) var used: [AnyServiceKey] = []

    /// An empty registrar, for a host's own services (`Kernel(…, services:)`).
    public init() {}

    /// Provides the service `key` names in `scope`, built by `factory` from the services its parameters name.
    @inlinable
    public mutating func register<T: Sendable, each Dependency: Sendable>(
        _ key: ServiceKey<T>, scope: ServiceScope, rank: ServiceRank = .primary,
        factory: @escaping @Sendable (repeat each Dependency) throws -> T
    ) {
        add(T.self, scope, rank, keys(repeat (each Dependency).self), live: Self.erase(factory), preview: nil)
    }

    /// Provides the service `key` names in `scope`, built by `factory`, or by `preview` when the kernel runs in
    /// preview mode.
    @inlinable
    public mutating func register<T: Sendable, each Dependency: Sendable>(
        _ key: ServiceKey<T>, scope: ServiceScope, rank: ServiceRank = .primary,
        factory: @escaping @Sendable (repeat each Dependency) throws -> T,
        preview: @escaping @Sendable (repeat each Dependency) throws -> T
    ) {
        add(
            T.self, scope, rank, keys(repeat (each Dependency).self), live: Self.erase(factory),
            preview: Self.erase(preview))
    }

    /// Provides a single instance of the service `key` names, built on first use; with `eager`, built before the
    /// module's `activate(_:)`, so that a factory that throws fails the module there instead of its first reader.
    @inlinable
    public mutating func singleton<T: Sendable, each Dependency: Sendable>(
        _ key: ServiceKey<T>, rank: ServiceRank = .primary, eager: Bool = false,
        factory: @escaping @Sendable (repeat each Dependency) throws -> T
    ) {
        add(
            T.self, .singleton, rank, keys(repeat (each Dependency).self), live: Self.erase(factory), preview: nil,
            eager: eager)
    }

    /// Provides a single instance of the service `key` names, with a stand-in for preview mode.
    @inlinable
    public mutating func singleton<T: Sendable, each Dependency: Sendable>(
        _ key: ServiceKey<T>, rank: ServiceRank = .primary, eager: Bool = false,
        factory: @escaping @Sendable (repeat each Dependency) throws -> T,
        preview: @escaping @Sendable (repeat each Dependency) throws -> T
    ) {
        add(
            T.self, .singleton, rank, keys(repeat (each Dependency).self), live: Self.erase(factory),
            preview: Self.erase(preview), eager: eager)
    }

    /// Provides a new instance of the service `key` names for each resolution; none is built ahead.
    @inlinable
    public mutating func transient<T: Sendable, each Dependency: Sendable>(
        _ key: ServiceKey<T>, rank: ServiceRank = .primary,
        factory: @escaping @Sendable (repeat each Dependency) throws -> T
    ) {
        register(key, scope: .transient, rank: rank, factory: factory)
    }

    /// Provides an instance of the service `key` names, kept until the kernel's `resetCached()`.
    ///
    /// It is built on first use, or before the module's `activate(_:)` with `eager`.
    @inlinable
    public mutating func cached<T: Sendable, each Dependency: Sendable>(
        _ key: ServiceKey<T>, rank: ServiceRank = .primary, eager: Bool = false,
        factory: @escaping @Sendable (repeat each Dependency) throws -> T
    ) {
        add(
            T.self, .cached, rank, keys(repeat (each Dependency).self), live: Self.erase(factory), preview: nil,
            eager: eager)
    }

    /// A factory of the kernel's shape (inlined where the module registers, so the closure is concrete code):
    /// resolve each parameter from the table, in order, then build the instance.
    @inlinable
    static func erase<T: Sendable, each Dependency: Sendable>(
        _ factory: @escaping @Sendable (repeat each Dependency) throws -> T
    ) -> ServiceMaker<T> {
        ServiceMaker { table in try factory(repeat try table.dependency((each Dependency).self)) }
    }

    @inlinable
    func keys<each Dependency>(_ types: repeat (each Dependency).Type) -> [AnyServiceKey] {
        var keys: [AnyServiceKey] = []
        for type in repeat each types { keys.append(AnyServiceKey(type)) }
        return keys
    }

    /// Adds a registration; `live` and `preview` build an instance of `type` (each made where the module registers).
    @usableFromInline
    mutating func add<T: Sendable>(
        _ type: T.Type, _ scope: ServiceScope, _ rank: ServiceRank, _ dependencies: [AnyServiceKey],
        live: ServiceMaker<T>, preview: ServiceMaker<T>?, eager: Bool = false
    ) {
        provided.append(
            ServiceRegistration(
                scope: scope, rank: rank, dependencies: dependencies, eager: eager, live: live, preview: preview))
        for dependency in dependencies where !used.contains(dependency) { used.append(dependency) }
    }

    /// Declares that the module's code resolves the service `key` names, which another module or the host
    /// provides. A module's `@Injected` properties declare their use themselves.
    public mutating func use<T>(_ key: ServiceKey<T>) {
        use(key.erased)
    }

    /// Declares a use by its erased key.
    package mutating func use(_ key: AnyServiceKey) {
        if !used.contains(key) { used.append(key) }
    }
}
