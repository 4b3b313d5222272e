internal import Foundation
public import Mosaic

/// A route a module serves while it is active, under the host's `/api` prefix: declared with
/// `module.route(_:_:exemptFromCSRFCheck:requires:handle:)`.
///
/// ```swift
/// module.route(.get, "/weather/:city") { (request: WebRequest, data: any WeatherData) in
///     .json(try encode(data.weather(in: request.parameters["city"])))
/// }
/// ```
///
/// The method and path are known when the module registers: the host matches a request against them before it
/// builds anything, and builds a route's handler (resolving the services it takes) once per activation, at the
/// first request it matches. A state-changing route (`POST`, `PUT`, `PATCH`, `DELETE`) is CSRF-checked like the
/// host's own forms: the host refuses it with 403, before the handler runs, unless the request carries the page's
/// token (a `csrf` form field or an `X-CSRF-Token` header) or is provably from the host's own pages (`Origin`,
/// `Sec-Fetch-Site`). A route that serves clients other than browsers opts out with `exemptFromCSRFCheck: true`;
/// the host's Modules page lists every such route.
public struct WebRoute: Sendable {
    /// The HTTP methods a module route can answer; `HEAD` is answered wherever `GET` is.
    public enum Method: String, Sendable {
        /// Reads; never CSRF-checked, so a `GET` handler must not change state.
        case get = "GET"
        /// Changes state; CSRF-checked unless the route is exempt.
        case post = "POST"
        /// Changes state; CSRF-checked unless the route is exempt.
        case put = "PUT"
        /// Changes state; CSRF-checked unless the route is exempt.
        case patch = "PATCH"
        /// Changes state; CSRF-checked unless the route is exempt.
        case delete = "DELETE"

        /// Whether requests with this method change state, and so must prove they come from the host's pages.
        public var isStateChanging: Bool { self != .get }
    }

    /// The method the route answers; a request with another method goes on to the next route.
    public let method: Method
    /// The path below `/api`, with `:name` segments that bind parameters.
    public let path: String
    /// Whether the host lets cross-site requests reach this route: `true` only for a route that serves clients
    /// other than browsers (which send no page token), and whose handler defends itself.
    public let isExemptFromCSRFCheck: Bool
    /// Answers a matching request, run as a call of the route's module (so `@Injected` resolves). An error it
    /// throws becomes a 500 with an error id; the host logs the error with the module's id.
    public let handle: @Sendable (WebRequest) async throws -> WebResponse

    package init(
        _ method: Method, _ path: String, exemptFromCSRFCheck: Bool,
        handle: @escaping @Sendable (WebRequest) async throws -> WebResponse
    ) {
        self.method = method
        self.path = path
        self.isExemptFromCSRFCheck = exemptFromCSRFCheck
        self.handle = handle
    }

    /// The parameters `path` binds in `requestPath`, percent-decoded, or `nil` when it does not match (or a
    /// segment is not valid percent-encoded UTF-8).
    public func match(_ requestPath: String) -> [String: String]? {
        Self.match(path, requestPath)
    }

    /// The parameters the route path `pattern` binds in `requestPath`, or `nil` when it does not match.
    package static func match(_ pattern: String, _ requestPath: String) -> [String: String]? {
        let expectedParts = pattern.split(separator: "/")
        let parts = requestPath.split(separator: "/")
        guard expectedParts.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, part) in zip(expectedParts, parts) {
            guard let decoded = String(part).removingPercentEncoding else { return nil }
            if expected.hasPrefix(":") {
                parameters[String(expected.dropFirst())] = decoded
            } else if expected != decoded {
                return nil
            }
        }
        return parameters
    }

    /// The route a contribution to ``ExtensionPoint/webRoutes`` declares, read from its metadata before its
    /// handler is built; `nil` for a contribution not made by `module.route`.
    package static func declared(by metadata: ContributionMetadata) -> (
        method: Method, path: String, isExemptFromCSRFCheck: Bool
    )? {
        guard let method = metadata.attributes[Attribute.method].flatMap(Method.init(rawValue:)),
            let path = metadata.attributes[Attribute.path]
        else { return nil }
        return (method, path, metadata.attributes[Attribute.exempt] == "true")
    }

    /// The metadata attributes a route's declaration is kept in.
    enum Attribute {
        static let method = "mosaic.web.method"
        static let path = "mosaic.web.path"
        static let exempt = "mosaic.web.csrf-exempt"
    }
}

/// A route crosses to a module in a process of its own as the requests it answers: the host keeps a stand-in with
/// the route's method and path, and each request is answered by the real handler in the module's process.
extension WebRoute: CallableContent {
    /// Answers `request` with the route's handler.
    public func answer(_ request: WebRequest) async throws -> WebResponse { try await handle(request) }

    /// The host's stand-in for the route `metadata` describes, whose requests `answer` carries to the module's
    /// process.
    public static func standIn(
        _ metadata: ContributionMetadata, answer: @escaping @Sendable (WebRequest) async throws -> WebResponse
    ) -> WebRoute? {
        guard let method = metadata.attributes[Attribute.method].flatMap(Method.init(rawValue:)),
            let path = metadata.attributes[Attribute.path]
        else { return nil }
        return WebRoute(
            method, path, exemptFromCSRFCheck: metadata.attributes[Attribute.exempt] == "true", handle: answer)
    }
}

/// Work a module wraps around every request while it is active (add a header, time, refuse): declared with
/// `module.middleware(_:priority:handle:)`, its handler built once per activation.
public struct WebMiddleware: Sendable {
    /// Handles a request: call `next` to go on inward (to the next middleware, then the page or route) or return a
    /// response of your own to stop it. An error it throws stops the request with a 500: the host fails closed,
    /// since middleware may be what guards the page.
    public let handle:
        @Sendable (WebRequest, _ next: @Sendable (WebRequest) async throws -> WebResponse) async throws -> WebResponse

    package init(
        _ handle:
            @escaping @Sendable (WebRequest, _ next: @Sendable (WebRequest) async throws -> WebResponse) async throws ->
            WebResponse
    ) {
        self.handle = handle
    }
}

extension ModuleRegistrar {
    /// Serves `method` `path` under the host's `/api` while the module is active: `:name` segments bind
    /// percent-decoded ``WebRequest/parameters``. `handle` takes the request, then services (any other parameter
    /// types, declared uses as in every closure a module registers), resolved once per activation when the first
    /// request matches; it runs as a call of the module.
    ///
    /// ```swift
    /// module.route(.get, "/weather/:city") { (request: WebRequest, data: any WeatherData) in … }
    /// ```
    ///
    /// A handler that throws, or services that cannot be resolved, answer 500 for this route only, with an error id
    /// the host logs with the module. Pass `exemptFromCSRFCheck: true` only for a state-changing route that
    /// non-browser clients call (see ``WebRoute``). Two routes with the same method and path, in one module or two,
    /// are a boot diagnostic (a duplicate contribution).
    public mutating func route<each Dependency: Sendable>(
        _ method: WebRoute.Method, _ path: String, exemptFromCSRFCheck: Bool = false,
        requires entitlement: Entitlement? = nil,
        handle: @escaping @Sendable (WebRequest, repeat each Dependency) async throws -> WebResponse
    ) {
        let path = "/" + path.split(separator: "/").joined(separator: "/")
        contribute(
            to: .webRoutes, id: "\(method.rawValue) \(path)",
            attributes: [
                WebRoute.Attribute.method: method.rawValue, WebRoute.Attribute.path: path,
                WebRoute.Attribute.exempt: exemptFromCSRFCheck ? "true" : "false",
            ], requires: entitlement, standby: nil, keepsContent: true
        ) { (dependency: repeat each Dependency) in
            WebRoute(method, path, exemptFromCSRFCheck: exemptFromCSRFCheck) { request in
                try await handle(request, repeat each dependency)
            }
        }
    }

    /// Wraps every request the host answers while the module is active, outermost first by `priority` (higher
    /// first): `handle` takes the request and `next` (the rest of the chain; call it to go on inward, or answer
    /// yourself to stop the request), then services as ``route(_:_:exemptFromCSRFCheck:requires:handle:)`` does.
    ///
    /// ```swift
    /// module.middleware("weather.timing") { request, next in
    ///     var response = try await next(request)
    ///     response.headers["X-Served-By"] = "weather"
    ///     return response
    /// }
    /// ```
    ///
    /// `handle` runs as a call of the module: `@Injected` values made in it resolve from the module's services, and
    /// its log lines name the module (`mosaic.module`); when the request's task has a `ServiceContext` (a traced
    /// request), `handle` sees that context with the module named in it, and otherwise none. `next` runs as the
    /// host's code: without the module's services, and with the request's own `ServiceContext`, or none.
    ///
    /// Middleware fails closed: if it throws, or its services cannot be resolved, the request stops with a 500.
    public mutating func middleware<each Dependency: Sendable>(
        _ id: String, priority: Int = 0, requires entitlement: Entitlement? = nil,
        handle:
            @escaping @Sendable (
                WebRequest, _ next: @Sendable (WebRequest) async throws -> WebResponse, repeat each Dependency
            ) async throws -> WebResponse
    ) {
        contribute(
            to: .webMiddleware, id: id, priority: priority, requires: entitlement, standby: nil, keepsContent: true
        ) { (dependency: repeat each Dependency) in
            WebMiddleware { request, next in try await handle(request, next, repeat each dependency) }
        }
    }

    /// Wraps every request the host answers while the module is active, as the form above does, for a middleware
    /// that takes no services: the host calls `handle` itself, with no layer between that passes services to it.
    ///
    /// ```swift
    /// module.middleware("weather.timing") { request, next in
    ///     var response = try await next(request)
    ///     response.headers["X-Served-By"] = "weather"
    ///     return response
    /// }
    /// ```
    public mutating func middleware(
        _ id: String, priority: Int = 0, requires entitlement: Entitlement? = nil,
        handle:
            @escaping @Sendable (WebRequest, _ next: @Sendable (WebRequest) async throws -> WebResponse) async throws ->
            WebResponse
    ) {
        contribute(
            to: .webMiddleware, id: id, priority: priority, requires: entitlement, standby: nil, keepsContent: true
        ) { WebMiddleware(handle) }
    }
}

extension ExtensionPoint where Content == WebRoute {
    /// HTTP routes under `/api`, served while their module is active.
    public static var webRoutes: Self { ExtensionPoint(id: "mosaic.web.routes") }
}

extension ExtensionPoint where Content == WebMiddleware {
    /// Middleware around every request, outermost first (by priority).
    public static var webMiddleware: Self { ExtensionPoint(id: "mosaic.web.middleware") }
}

extension ExtensionPoint where Content == Panel {
    /// The content of a tab: panels whose contribution names the tab (`contribute(to: .tabPages, …, tab: "weather")`).
    public static var tabPages: Self { ExtensionPoint(id: "mosaic.web.tab-pages") }
}

/// The extension points a web host declares beyond the built-in ones.
public enum WebPoints {
    /// `.webRoutes`, `.webMiddleware` and `.tabPages`: pass them as the kernel's `extensionPoints`, or
    /// contributions to them are diagnosed as contributions to an unknown extension point.
    public static let all: [AnyExtensionPoint] = [
        ExtensionPoint<WebRoute>.webRoutes.erased, ExtensionPoint<WebMiddleware>.webMiddleware.erased,
        ExtensionPoint<Panel>.tabPages.erased, ExtensionPoint<HealthCheck>.healthChecks.erased,
    ]
}
