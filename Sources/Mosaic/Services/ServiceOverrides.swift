public import Synchronization

/// Replacements for services within one task tree, for tests: parallel tests never see each other's.
///
/// ```swift
/// try await withOverrides { $0.override((any WeatherService).self) { MockWeather() } } operation: {
///     #expect(try harness.services.resolve((any WeatherService).self) is MockWeather)
/// }
/// ```
/// Inside the scope, singletons and cached services are built fresh and not kept, so a mock never leaks into the
/// instances other tasks share. Outside any scope, resolution pays one relaxed atomic load for this feature.
public struct ServiceOverrides: Sendable {
    private var factories: [ObjectIdentifier: @Sendable () -> any Sendable] = [:]

    public init() {}

    /// Resolves `type` to what `make` returns, within the scope.
    public mutating func override<T: Sendable>(_ type: T.Type, with make: @escaping @Sendable () -> T) {
        factories[ObjectIdentifier(type)] = make
    }

    /// The replacement for `type`, if the scope has one.
    @usableFromInline
    func value<T>(of type: T.Type) -> T? {
        // A test-only path: the cast is checked, and it cannot fail, since `override` stored a `T` for `T`.
        factories[ObjectIdentifier(type)].flatMap { $0() as? T }
    }

    /// The overrides of the current task tree.
    @TaskLocal @usableFromInline static var current: ServiceOverrides?

    /// How many override scopes are open in the whole process; while zero, resolution skips the task-local lookup.
    @usableFromInline static let openScopes = Atomic<Int>(0)

    @inlinable
    static var areActive: Bool { openScopes.load(ordering: .relaxed) > 0 }

    static func withScope<R>(_ overrides: ServiceOverrides, operation: () async throws -> R) async rethrows -> R {
        openScopes.add(1, ordering: .relaxed)
        defer { openScopes.subtract(1, ordering: .relaxed) }
        return try await $current.withValue(overrides, operation: operation)
    }
}

/// Runs `operation` with services replaced as `configure` says, in this task and the tasks it creates; scopes
/// nest, the inner one adding to the outer.
public func withOverrides<R>(
    _ configure: (inout ServiceOverrides) -> Void,
    operation: () async throws -> R
) async rethrows -> R {
    var overrides = ServiceOverrides.current ?? ServiceOverrides()
    configure(&overrides)
    return try await ServiceOverrides.withScope(overrides, operation: operation)
}
