public import CMosaicReaders

/// Replacements for services within one task tree, for tests (MosaicTesting's `withOverrides` opens one): parallel
/// tests never see each other's.
///
/// Inside the scope, singletons and cached services are built fresh and not kept, so a mock never leaks into the
/// instances other tasks share. Outside any scope, resolution pays one relaxed atomic load for this feature.
@usableFromInline
package struct OverrideScope: Sendable {
    private var factories: [ObjectIdentifier: @Sendable () -> any Sendable] = [:]

    package init() {}

    /// Resolves `type` to what `make` returns, within the scope.
    package mutating func override<T: Sendable>(_ type: T.Type, with make: @escaping @Sendable () -> T) {
        factories[ObjectIdentifier(type)] = make
    }

    /// The replacement for `type`, if the scope has one.
    @usableFromInline
    func value<T>(of type: T.Type) -> T? {
        // A test-only path: the cast is checked, and it cannot fail, since `override` stored a `T` for `T`.
        factories[ObjectIdentifier(type)].flatMap { $0() as? T }
    }

    /// The overrides of the current task tree.
    @TaskLocal @usableFromInline package static var current: OverrideScope?

    /// Whether any override scope is open in the whole process; while none is, resolution skips the task-local
    /// lookup. (The count is a C global: a Swift one costs every resolve a call to its lazy initializer.)
    @inlinable
    static var areActive: Bool { mosaic_override_scopes_are_open() != 0 }

    /// Runs `operation` with `overrides` as the current task tree's scope.
    package static func withScope<R>(
        _ overrides: OverrideScope, operation: () async throws -> R
    ) async rethrows -> R {
        mosaic_count_override_scopes(1)
        defer { mosaic_count_override_scopes(-1) }
        return try await $current.withValue(overrides, operation: operation)
    }
}
