internal import Synchronization

/// A service, resolved for the module whose code created the value holding it.
///
/// ```swift
/// struct DashboardModule: Module {
///     @Injected(.weatherData) var weather
///     …
/// }
/// ```
/// A module's own `@Injected` properties declare their use: the kernel creates the module once while it registers
/// it, and every `@Injected` created then is a declared use, validated with the rest of the graph. (So a module's
/// `init()` should only set properties.) An `@Injected` in another value (created in `activate`, say) resolves
/// only what its module declared, with `module.services.use(…)` or an `@Injected` property: injection is not a way
/// around least privilege.
///
/// The wrapper remembers the ``Services`` of the module running when it is created — the kernel sets them around
/// all the module's code it runs: `init()`, `activate(_:)`, `deactivate()`, link handlers, content, participants,
/// listeners and ``ActivationContext/task(_:)`` — and resolves on each read, so overrides and deactivation are
/// always seen. A wrapper created outside any module's code resolves from the module whose code reads it.
///
/// ## When a service cannot be resolved
/// A property cannot throw, so `@Injected` is made not to need to:
/// - Before a module's `activate(_:)`, the kernel builds the services the module registered `eager: true` (a
///   factory that throws fails that module, with the service named) and resolves the module's own `@Injected`
///   properties (one that cannot be resolved fails the module with the reason). A module that uses a service of a
///   failed or inactive provider is blocked and never runs. Other services are built on their first resolve.
/// - When a read fails anyway (a factory threw on a first resolve, a provider is gone), the read
///   records the error in the kernel's call, which then fails with it (a link answers not handled, content throws,
///   a participant is reported failed, an activation fails the module), and returns the instance this wrapper
///   resolved last. The process never stops for it.
/// - A wrapper created in a module's code resolves once when it is created, so it has an instance to fall back on.
///   Only a wrapper whose service could not be resolved when it was created, nor when it is read (an intermittent
///   factory failure), has no value to return: that read stops with the reason. Read services whose factories may
///   fail with `try $property.resolve()`, which throws instead.
///
/// The wrapper keeps the first instance it resolved (its fallback), so a value holding it keeps that instance alive
/// after its module deactivates; module code is dropped with its module, and the kernel then releases the rest.
///
/// In a service factory, take dependencies as the factory's parameters: factories run wherever the first resolve
/// happens, so they have no module of their own to inject from.
@propertyWrapper
public struct Injected<T: Sendable>: Sendable {
    @usableFromInline let services: Services?
    @usableFromInline let last = LastResolved<T>()

    /// Injects the service `key` names: declares the use when the kernel registers the module, then captures the
    /// services of the module whose code is running now and resolves once, so that a later failed read has an
    /// instance to fall back on.
    public init(_ key: ServiceKey<T>) {
        InjectedUses.current?.record(key.erased)
        services = Services.current
        if services != nil, let value = try? resolve() { last.keep(value) }
    }

    /// The service; see the discussion for what a failed read returns.
    @inlinable
    public var wrappedValue: T {
        do {
            return try resolve()
        } catch {
            return fallback(after: error)
        }
    }

    /// The wrapper itself, for ``resolve()``.
    public var projectedValue: Self { self }

    /// The service, or the reason it cannot be resolved.
    @inlinable
    public func resolve() throws(ServiceError) -> T {
        // The stored services are read in place (binding them with `if let` would copy and retain their tables),
        // and the instance is returned as resolved: an `Optional` of it in between was copied once more.
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

    /// What a failed read returns: the last instance, after recording `error` in the module's call.
    @usableFromInline
    func fallback(after error: ServiceError) -> T {
        ModuleCall.current?.record(error)
        if let value = last.value { return value }
        preconditionFailure(
            error.message + " (nothing was ever resolved for this @Injected, so there is no instance to fall back "
                + "on; read it with `try $property.resolve()` where it may fail)")
    }
}

/// What the kernel checks in a module's stored properties before activating it.
package protocol InjectedProperty {
    /// Resolves the service now and keeps it, or throws why it cannot be resolved.
    func prepare() throws(ServiceError)
}

/// Resolves every ``Injected`` stored property of `module` now, so that one that cannot be resolved fails the
/// module's activation rather than a later read.
///
/// Which types hold none is remembered: reflection is the costly part, and stored properties are fixed per type
/// (a class's superclass properties were never among a mirror's children).
package func prepareInjectedProperties(of module: Any) throws(ServiceError) {
    // A type of no size stores nothing, so no `Injected` either: most modules keep their work in `register(in:)`
    // and skip reflection altogether (its first use in a process reads the field records of every type in it).
    func size<T>(of _: T.Type) -> Int { MemoryLayout<T>.size }
    guard _openExistential(Swift.type(of: module), do: size) != 0 else { return }
    let type = ObjectIdentifier(Swift.type(of: module))
    guard !typesWithoutInjected.withLock({ $0.contains(type) }) else { return }
    var found = false
    for case let property as any InjectedProperty in Mirror(reflecting: module).children.map(\.value) {
        found = true
        try property.prepare()
    }
    if !found { _ = typesWithoutInjected.withLock { $0.insert(type) } }
}

/// The module types ``prepareInjectedProperties(of:)`` found no ``Injected`` property in.
private let typesWithoutInjected = Locked<Set<ObjectIdentifier>>([])

extension Injected: InjectedProperty {
    package func prepare() throws(ServiceError) {
        last.keep(try resolve())
    }
}

/// The instance an ``Injected`` resolved last, shared by the wrapper's copies.
@usableFromInline
final class LastResolved<T: Sendable>: Sendable {
    private let stored = Locked<T?>(nil)
    private let isSet = Atomic<Bool>(false)

    /// Keeps `value` when nothing is kept yet (later reads resolve anew, so the first is as good as any).
    func keep(_ value: T) {
        guard !isSet.load(ordering: .acquiring) else { return }
        stored.withLock { $0 = value }
        isSet.store(true, ordering: .releasing)
    }

    var value: T? { stored.withLock { $0 } }
}

extension Services {
    /// The services of the module whose code the current task runs, if any; see ``Injected``.
    package static var current: Services? { ModuleScope.current.services }

    /// Runs `operation` with these services as ``current``, so `@Injected` values created in it resolve here.
    package func inject<R>(_ operation: () async throws -> R) async rethrows -> R {
        let scope = ModuleScope(services: self, call: ModuleScope.current.call)
        return try await ModuleScope.$current.withValue(scope, operation: operation)
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
