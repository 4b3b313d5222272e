internal import Foundation
public import Mosaic

/// An HTTP request as a module's route or middleware sees it: no web framework in the module's imports.
public struct WebRequest: Sendable, Codable {
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
public struct WebResponse: Sendable, Hashable, Codable {
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
