internal import Foundation
public import Mosaic

/// An HTTP request as a module's route or middleware sees it: no web framework in the module's imports.
public struct WebRequest: Sendable {
    /// `GET`, `POST`…
    public var method: String
    /// The path, without the query: `/api/weather/Oslo`.
    public var path: String
    /// The query's items, in order.
    public var query: [QueryItem]
    /// The values bound by the route's `:name` segments, percent-decoded.
    public var parameters: [String: String]
    /// The body of a state-changing request (`POST`, `PUT`, `PATCH`, `DELETE`) as UTF-8 text, within the host's
    /// size limit; empty for other methods.
    public var body: String

    /// A request as the host hands it over; tests use this to call a route's or middleware's handler directly.
    public init(
        method: String, path: String, query: [QueryItem] = [], parameters: [String: String] = [:], body: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.parameters = parameters
        self.body = body
    }

    /// The first query value named `name`.
    public subscript(query name: String) -> String? { query.first { $0.name == name }?.value }
}

/// An HTTP response from a module.
public struct WebResponse: Sendable, Hashable {
    /// The HTTP status code, such as 200 or 404.
    public var status: Int
    /// The `Content-Type` header's value.
    public var contentType: String
    /// Further header fields; a name that is not a valid field name is dropped, and the host's security headers
    /// (`Content-Security-Policy`, `X-Frame-Options`…) replace any of the same name.
    public var headers: [String: String]
    /// The body, sent as UTF-8.
    public var body: String

    /// A response; plain UTF-8 text with status 200 unless told otherwise.
    public init(
        status: Int = 200, contentType: String = "text/plain; charset=utf-8", headers: [String: String] = [:],
        body: String
    ) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// A JSON response; `json` must already be encoded.
    public static func json(_ json: String, status: Int = 200) -> WebResponse {
        WebResponse(status: status, contentType: "application/json", body: json)
    }
}

/// A route a module serves while it is active, under the host's `/api` prefix.
///
/// ```swift
/// module.contribute(to: .webRoutes, id: "weather.api", title: "Weather API") { (data: any WeatherData) in
///     WebRoute(.get, "/weather/:city") { request in .json(try encode(data.weather(in: request.parameters["city"]))) }
/// }
/// ```
///
/// A state-changing route (`POST`, `PUT`, `PATCH`, `DELETE`) is CSRF-checked like the host's own forms: the host
/// refuses it with 403, before the handler runs, unless the request carries the page's token (a `csrf` form field or
/// an `X-CSRF-Token` header) or is provably from the host's own pages (`Origin`, `Sec-Fetch-Site`). A route that
/// serves clients other than browsers opts out with `exemptFromCSRFCheck: true`; the host's Modules page lists
/// every such route.
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

    /// A route; pass `exemptFromCSRFCheck: true` only for a state-changing route that non-browser clients call.
    public init(
        _ method: Method, _ path: String, exemptFromCSRFCheck: Bool = false,
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
        let pattern = path.split(separator: "/")
        let parts = requestPath.split(separator: "/")
        guard pattern.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, part) in zip(pattern, parts) {
            guard let decoded = String(part).removingPercentEncoding else { return nil }
            if expected.hasPrefix(":") {
                parameters[String(expected.dropFirst())] = decoded
            } else if expected != decoded {
                return nil
            }
        }
        return parameters
    }
}

/// Work a module wraps around every request while it is active: add a header, time, refuse.
public struct WebMiddleware: Sendable {
    /// Handles a request: call `next` to go on inward (to the next middleware, then the page or route) or return a
    /// response of your own to stop it. An error it throws stops the request with a 500: the host fails closed,
    /// since middleware may be what guards the page.
    public let handle:
        @Sendable (WebRequest, _ next: @Sendable (WebRequest) async throws -> WebResponse) async throws -> WebResponse

    /// Middleware from `handle`, which receives the request and the rest of the chain as `next`.
    public init(
        _ handle:
            @escaping @Sendable (WebRequest, _ next: @Sendable (WebRequest) async throws -> WebResponse) async throws ->
            WebResponse
    ) {
        self.handle = handle
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
