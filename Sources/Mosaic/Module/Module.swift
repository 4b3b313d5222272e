/// A self-contained feature of the application: who it is, what it needs, and what it does when it runs.
///
/// A module declares a static ``manifest`` that the kernel validates, with every other module's, before any
/// module is created; then the kernel creates each module with `init()` and calls ``activate(_:)`` in
/// dependency order. Both lifecycle methods have empty defaults, so a module writes only what it needs.
///
/// ```swift
/// struct WeatherModule: Module {
///     static let manifest = Manifest(id: "com.ghost.weather", version: "1.4.0", entitlements: ["weather"])
///
///     func activate(_ context: ActivationContext) async throws {
///         context.logger.info("weather is up")
///     }
/// }
/// ```
///
/// Implementation requirements:
/// - `activate` should finish promptly; the kernel fails a module that exceeds its time limit and cancels its task.
/// - `deactivate` must release whatever `activate` acquired; it is called once, in reverse dependency order.
/// - A module is created again after it was deactivated and is activated again (for example when an entitlement
///   is granted back), so it must not rely on state from an earlier activation.
public protocol Module: Sendable {
    /// The module's identity, needs and dependencies.
    static var manifest: Manifest { get }

    /// Declares what the module provides and uses. Called once, before validation, without side effects: it must
    /// only describe, never run, the factories it registers.
    static func register(in module: inout ModuleRegistrar)

    /// Creates the module. Keep it free of side effects: besides the instance it activates (made after the graph
    /// was validated), the kernel makes one while it reads the declarations, to see which services the module's
    /// `@Injected` properties use.
    init()

    /// Starts the module. Throwing fails this module and blocks the modules that require it.
    func activate(_ context: ActivationContext) async throws

    /// Stops the module and releases what it holds.
    func deactivate() async
}

extension Module {
    /// Registers nothing: a module without services or contributions.
    public static func register(in module: inout ModuleRegistrar) {}
    /// Does nothing: a module with nothing to start.
    public func activate(_ context: ActivationContext) async throws {}
    /// Does nothing: a module with nothing to release.
    public func deactivate() async {}
}
