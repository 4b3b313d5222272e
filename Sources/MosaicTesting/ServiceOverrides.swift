public import Mosaic

/// Replacements for services within one task tree: parallel tests never see each other's.
///
/// ```swift
/// try await withOverrides { $0.override(.weatherData) { MockWeather() } } operation: {
///     #expect(try app.services.resolve(.weatherData) is MockWeather)
/// }
/// ```
/// Inside the scope, singletons and cached services are built fresh and not kept, so a mock never leaks into the
/// instances other tasks share.
public struct ServiceOverrides: Sendable {
    package var scope: OverrideScope

    /// Resolves the service `key` names to what `make` returns, within the scope.
    public mutating func override<T: Sendable>(_ key: ServiceKey<T>, with make: @escaping @Sendable () -> T) {
        scope.override(T.self, with: make)
    }
}

/// Runs `operation` with services replaced as `configure` says, in this task and the tasks it creates; scopes
/// nest, the inner one adding to the outer.
public func withOverrides<R>(
    _ configure: (inout ServiceOverrides) -> Void,
    operation: () async throws -> R
) async rethrows -> R {
    var overrides = ServiceOverrides(scope: OverrideScope.current ?? OverrideScope())
    configure(&overrides)
    return try await OverrideScope.withScope(overrides.scope, operation: operation)
}
