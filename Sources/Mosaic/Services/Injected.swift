internal import Synchronization

/// A service, resolved for the module whose code created the value holding it.
///
/// ```swift
/// struct Forecaster {
///     @Injected var weather: any WeatherService
///     func today() async throws -> Forecast { try await weather.forecast(for: .today) }
/// }
/// ```
/// The wrapper remembers the ``Services`` of the module running when it is created — the kernel sets them around
/// all the module's code it runs: `init()`, `activate(_:)`, `deactivate()`, link handlers, content, participants,
/// listeners and ``ActivationContext/task(_:)`` — and resolves on each read, so overrides and deactivation are
/// always seen. The module must still declare the use (`module.services.use(…)`): injection is not a way around
/// least privilege.
///
/// ## When a service cannot be resolved
/// A property cannot throw, so `@Injected` is made not to need to:
/// - Before a module's `activate(_:)`, the kernel builds the singletons the module provides (a factory that throws
///   fails that module, with the service named) and resolves the module's own `@Injected` properties (one that
///   cannot be resolved fails the module with the reason). A module that uses a service of a failed or inactive
///   provider is blocked and never runs. So while a module is active, reads of singletons never fail.
/// - When a read fails anyway (the factory of a transient or cached service threw, a provider is gone), the read
///   returns the instance this wrapper resolved last and records the error in the kernel's call: the call then
///   fails with it (a link answers not handled, content throws, a participant is reported failed, an activation
///   fails the module). The process never stops for it.
/// - A wrapper created in a module's code resolves once when it is created, so it has an instance to fall back on.
///   Only a wrapper whose service could not be resolved when it was created, nor when it is read (an intermittent
///   factory failure, or a wrapper created outside any module), has no value to return: that read stops with the
///   reason. Read services whose factories may fail, and any service outside a module's code, with
///   `try $property.resolve()`, which throws instead.
///
/// The wrapper keeps the first instance it resolved (its fallback), so a value holding it keeps that instance alive
/// after its module deactivates; module code is dropped with its module, and the kernel then releases the rest.
///
/// In a service factory, take dependencies as the factory's parameters: factories run wherever the first resolve
/// happens, so they have no module of their own to inject from.
@propertyWrapper
public struct Injected<T: Sendable>: Sendable {
    private let services: Services?
    private let last = LastResolved<T>()

    /// Captures the services of the module whose code is running now, and resolves the service once so that a
    /// later failed read has an instance to fall back on.
    public init() {
        services = Services.current
        if services != nil, let value = try? resolve() { last.keep(value) }
    }

    /// The service; see the discussion for what a failed read returns.
    public var wrappedValue: T {
        do {
            let value = try resolve()
            last.keep(value)
            return value
        } catch {
            ModuleCall.current?.record(error)
            if let value = last.value { return value }
            preconditionFailure(
                error.message + " (nothing was resolved through this @Injected before, so there is no instance to "
                    + "fall back on; read it with `try $property.resolve()` where it may fail)")
        }
    }

    /// The wrapper itself, for ``resolve()``.
    public var projectedValue: Self { self }

    /// The service, or the reason it cannot be resolved.
    public func resolve() throws(ServiceError) -> T {
        if ServiceOverrides.areActive, let value = ServiceOverrides.current?.value(of: T.self) { return value }
        guard let services else {
            let name = String(describing: T.self)
            throw ServiceError(
                .outsideModule, service: name,
                message: "@Injected \(name) was created outside a module's code, so it has no services to "
                    + "resolve from; create it in the module's init, activate or deactivate (or a task they start), "
                    + "or override \(name) with withOverrides in a test.")
        }
        return try services.resolve(T.self)
    }
}

/// What the kernel checks in a module's stored properties before activating it.
package protocol InjectedProperty {
    /// Resolves the service now and keeps it, or throws why it cannot be resolved.
    func prepare() throws(ServiceError)
}

extension Injected: InjectedProperty {
    package func prepare() throws(ServiceError) {
        last.keep(try resolve())
    }
}

/// The instance an ``Injected`` resolved last, shared by the wrapper's copies.
final class LastResolved<T: Sendable>: Sendable {
    private let stored = Mutex<T?>(nil)
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
    @TaskLocal public static var current: Services?

    /// Runs `operation` with these services as ``current``, so `@Injected` values created in it resolve here.
    public func inject<R>(_ operation: () async throws -> R) async rethrows -> R {
        try await Self.$current.withValue(self, operation: operation)
    }
}
