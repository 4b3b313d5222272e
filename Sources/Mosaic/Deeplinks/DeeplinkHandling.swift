/// A link's shape as a type, so modules build links to each other without concatenating strings, and handlers
/// receive typed values. Its query is derived from its stored properties (see ``init(link:)``).
///
/// ```swift
/// struct CityRoute: DeeplinkRoute {
///     static let tab = "dashboard", feature = "weather"
///     static let action: String? = "city"
///     var name: String
/// }
/// context.url(for: CityRoute(name: "Oslo"))   // ghost://dashboard/weather/city?name=Oslo
/// ```
public protocol DeeplinkRoute: Codable, Sendable {
    /// The tab the app shows for the link.
    static var tab: String { get }
    /// The feature that handles the link.
    static var feature: String { get }
    /// The action within the feature, if any.
    static var action: String? { get }
    /// Reads the route from a link of its feature and action; throws when a parameter is missing or invalid.
    init(link: Deeplink) throws(DeeplinkError)
    /// The route's parameters.
    var query: [QueryItem] { get }
}

extension DeeplinkRoute {
    /// No action: the route is the feature's link.
    public static var action: String? { nil }

    /// The link to this route in `scheme`; module code builds links with ``ActivationContext/url(for:)``, in the
    /// host's scheme.
    public func link(scheme: String) -> Deeplink {
        Deeplink(scheme: scheme, tab: Self.tab, feature: Self.feature, action: Self.action, query: query)
    }
}

/// How a module handles links of one feature (and action).
package struct DeeplinkHandler: Sendable {
    package let feature: String
    /// The action handled; `nil` handles every action of the feature that no more specific handler takes.
    package let action: String?
    /// The entitlement the host must grant for the handler to run.
    package let entitlement: Entitlement?
    /// Whether the handler only navigates or shows, and persists nothing, so a host may apply the link without
    /// asking first (a web host, on a plain `GET`). `false` unless the module declares it.
    package let navigatesOnly: Bool
    package let handle: @Sendable (Deeplink, ActivationContext) async throws -> Void
}

extension ModuleRegistrar {
    /// Handles links to `feature` (and `action`): the kernel first navigates to the link's tab, then awaits this.
    /// Pass `navigatesOnly: true` when the handler persists nothing, so hosts may open such links without asking.
    public mutating func handle(
        feature: String, action: String? = nil, requires entitlement: Entitlement? = nil, navigatesOnly: Bool = false,
        _ handler: @escaping @Sendable (Deeplink, ActivationContext) async throws -> Void
    ) {
        deeplinks.append(
            DeeplinkHandler(
                feature: feature, action: action, entitlement: entitlement, navigatesOnly: navigatesOnly,
                handle: handler))
    }

    /// Handles links to `route`'s feature and action, read into a `Route`; the handler's other parameters are
    /// injected as a contribution's are: the module's ``ActivationContext``, or services.
    ///
    /// ```swift
    /// module.handle(CityRoute.self) { (route: CityRoute, context: ActivationContext, data: any WeatherData) in … }
    /// ```
    public mutating func handle<Route: DeeplinkRoute, each Parameter: Sendable>(
        _ route: Route.Type, requires entitlement: Entitlement? = nil, navigatesOnly: Bool = false,
        _ handler: @escaping @Sendable (Route, repeat each Parameter) async throws -> Void
    ) {
        _ = declareInjected(repeat (each Parameter).self)
        handle(feature: Route.feature, action: Route.action, requires: entitlement, navigatesOnly: navigatesOnly) {
            link, context in
            try await Self.awaitArguments(context, repeat (each Parameter).self)
            try await handler(try Route(link: link), repeat try Self.argument((each Parameter).self, context))
        }
    }

    /// Handles links to `route`'s feature and action, read into a `Route`, with the module's context.
    public mutating func handle<Route: DeeplinkRoute>(
        _ route: Route.Type, requires entitlement: Entitlement? = nil, navigatesOnly: Bool = false,
        _ handler: @escaping @Sendable (Route, ActivationContext) async throws -> Void
    ) {
        handle(feature: Route.feature, action: Route.action, requires: entitlement, navigatesOnly: navigatesOnly) {
            link, context in
            try await handler(try Route(link: link), context)
        }
    }
}

/// What became of a link.
public enum DeeplinkResult: Sendable, Equatable {
    /// The app navigated to `tab`, and `module`'s handler (if the link names a feature) returned.
    case handled(tab: String, module: ModuleID?)
    /// The link was rejected or nothing could handle it; the error says why and what to do.
    case notHandled(DeeplinkError)
}
