/// A service, resolved for the module whose code created the value holding it.
///
/// ```swift
/// struct Forecaster {
///     @Injected var weather: any WeatherService
///     func today() async throws -> Forecast { try await weather.forecast(for: .today) }
/// }
/// ```
/// The wrapper remembers the ``Services`` of the module running when it is created — the kernel sets them around a
/// module's `init()`, `activate(_:)` and `deactivate()` — and resolves on each read, so overrides and deactivation
/// are always seen. The module must still declare the use (`module.services.use(…)`): injection is not a way
/// around least privilege. Reading a service that cannot be resolved is a programming error and stops with the
/// wiring to fix; `$property.resolve()` throws instead.
///
/// In a service factory, take dependencies as the factory's parameters: factories run wherever the first resolve
/// happens, so they have no module of their own to inject from.
@propertyWrapper
public struct Injected<T: Sendable>: Sendable {
    private let services: Services?

    /// Captures the services of the module whose code is running now.
    public init() {
        services = Services.current
    }

    /// The service; stops with the missing wiring when it cannot be resolved.
    public var wrappedValue: T {
        do {
            return try resolve()
        } catch {
            preconditionFailure(error.message)
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

extension Services {
    /// The services of the module whose code the current task runs, if any; see ``Injected``.
    @TaskLocal public static var current: Services?

    /// Runs `operation` with these services as ``current``, so `@Injected` values created in it resolve here.
    public func inject<R>(_ operation: () async throws -> R) async rethrows -> R {
        try await Self.$current.withValue(self, operation: operation)
    }
}
