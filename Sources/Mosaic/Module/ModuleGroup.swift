/// A named list of modules, such as "core" or "features", that an app aggregates into its catalog.
///
/// ```swift
/// enum Features: ModuleGroup {
///     static let modules: [any Module.Type] = [WeatherModule.self, SportsModule.self]
/// }
/// ```
/// Groups may list the same module more than once (directly or through another group): the catalog keeps one.
public protocol ModuleGroup: Sendable {
    /// The modules of this group.
    static var modules: [any Module.Type] { get }
}
