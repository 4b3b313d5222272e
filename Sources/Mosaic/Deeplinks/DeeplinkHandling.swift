/// A link's shape as a type, so modules build links to each other without concatenating strings, and handlers
/// receive typed values.
///
/// ```swift
/// struct CityRoute: DeeplinkRoute {
///     static let tab = "dashboard", feature = "weather"
///     static let action: String? = "city"
///     var name: String
///     init(name: String) { self.name = name }
///     init(link: Deeplink) throws(DeeplinkError) { name = try link.require("name") }
///     var query: [QueryItem] { [QueryItem("name", name)] }
/// }
/// CityRoute(name: "Oslo").link(scheme: "ghost").url   // ghost://dashboard/weather/city?name=Oslo
/// ```
public protocol DeeplinkRoute: Sendable {
    static var tab: String { get }
    static var feature: String { get }
    static var action: String? { get }
    /// Reads the route from a link of its feature and action; throws when a parameter is missing or invalid.
    init(link: Deeplink) throws(DeeplinkError)
    /// The route's parameters.
    var query: [QueryItem] { get }
}

extension DeeplinkRoute {
    public static var action: String? { nil }
    public var query: [QueryItem] { [] }

    /// The link to this route.
    public func link(scheme: String) -> Deeplink {
        Deeplink(scheme: scheme, tab: Self.tab, feature: Self.feature, action: Self.action, query: query)
    }
}

/// How a module handles links of one feature (and action).
public struct DeeplinkHandler: Sendable {
    public let feature: String
    /// The action handled; `nil` handles every action of the feature that no more specific handler takes.
    public let action: String?
    /// The entitlement the host must grant for the handler to run.
    public let entitlement: Entitlement?
    /// Whether the handler only navigates or shows, and persists nothing, so a host may apply the link without
    /// asking first (a web host, on a plain `GET`). `false` unless the module declares it.
    public let navigatesOnly: Bool
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

    /// Handles links to `route`'s feature and action, read into a `Route`.
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
