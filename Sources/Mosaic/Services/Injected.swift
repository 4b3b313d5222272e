internal import Synchronization

/// A service a module uses, declared in one line as a stored property and resolved where it is read.
///
/// ```swift
/// struct DashboardModule: Module {
///     @Injected(.weatherData) var forecasts
///
///     func activate(_ context: ActivationContext) async throws {
///         let today = try forecasts().weather(in: "Oslo")
///     }
/// }
/// ```
/// Rules:
/// - A module's own `@Injected` properties declare their use: the kernel creates the module once while it reads its
///   declarations, and every `@Injected` created then is a use, validated with the rest of the graph. (So a
///   module's `init()` should only set properties.)
/// - Reading is `try forecasts()`: services are built on first use and a factory may throw, so a read may fail. The
///   error says why (the factory's own error, a provider that is not active, a use not declared), and thrown on,
///   it fails what the module was doing: its activation, a link, a content build, a handler. Mosaic never stops
///   the process for it.
/// - Anywhere in a module's code (a local, a property of another value) an `@Injected` resolves from the services
///   of the module whose code created it, or, when created outside any module's code, of the module whose code
///   reads it. It resolves only what that module declared: injection is not a way around least privilege.
/// - Each read resolves anew, so overrides and a provider's deactivation are always seen; an `@Injected` keeps no
///   instance alive.
///
/// In a service factory, take dependencies as the factory's parameters: factories run wherever the first resolve
/// happens, so they have no module of their own to inject from.
@propertyWrapper
public struct Injected<T: Sendable>: Sendable {
    @usableFromInline let services: Services?

    /// Injects the service `key` names: declares the use when the kernel reads the module's declarations, and
    /// remembers the services of the module whose code is running now.
    public init(_ key: ServiceKey<T>) {
        InjectedUses.current?.record(key.erased)
        services = Services.current
    }

    /// The wrapper itself: read the service with `try property()`.
    public var wrappedValue: Self { self }

    /// The service, or the reason it cannot be resolved.
    @inlinable
    public func callAsFunction() throws(ServiceError) -> T {
        // The stored services are read in place: binding them with `if let` would copy and retain their tables.
        guard services != nil else { return try resolveWithoutServices() }
        return try services.unsafelyUnwrapped.resolve(T.self)
    }

    @usableFromInline
    func resolveWithoutServices() throws(ServiceError) -> T {
        if OverrideScope.areActive, let value = OverrideScope.current?.value(of: T.self) { return value }
        if let current = Services.current { return try current.resolve(T.self) }
        let name = qualifiedTypeName(T.self)
        throw ServiceError(
            .outsideModule, service: name,
            message: "@Injected \(name) was created and read outside a module's code, so it has no services to "
                + "resolve from; create or read it in the module's code, or override \(name) with withOverrides "
                + "(MosaicTesting) in a test.")
    }
}

extension Services {
    /// The services of the module whose code the current task runs, if any; see ``Injected``.
    @TaskLocal package static var current: Services?

    /// Runs `operation` with these services as ``current``, so `@Injected` values created in it resolve here.
    package func inject<R>(_ operation: () async throws -> R) async rethrows -> R {
        try await Services.$current.withValue(self, operation: operation)
    }
}

/// The services the `@Injected` values created in a scope name: how a module's `@Injected` properties declare their
/// use when the kernel registers the module.
package final class InjectedUses: Sendable {
    @TaskLocal static var current: InjectedUses?
    private let keys = Locked<[AnyServiceKey]>([])

    func record(_ key: AnyServiceKey) { keys.withLock { $0.append(key) } }

    /// The keys of the `@Injected` values `make` creates.
    package static func recorded(while make: () -> Void) -> [AnyServiceKey] {
        let uses = InjectedUses()
        $current.withValue(uses, operation: make)
        return uses.keys.withLock { $0 }
    }
}
