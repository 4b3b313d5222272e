internal import HTTPTypes
internal import Hummingbird
internal import MosaicWeb
internal import NIOCore

/// The host's defences as a middleware, around the requests no route of the host matches; the host's own routes and
/// the modules' routes under `/api` have the same defences in their responders (``DefendedRoutes``). Outermost:
///
/// 1. a `Host` outside ``WebHostOptions/allowedHosts`` is refused with 421 (DNS rebinding);
/// 2. more header fields than ``WebHostOptions/maximumHeaderCount``, or one longer than
///    ``WebHostOptions/maximumHeaderLineSize``, are refused with 431;
/// 3. a state-changing request's body is read up to ``WebHostOptions/maximumBodySize`` (413 beyond), and outside
///    `/api` it must prove it comes from the host's pages (403 otherwise); under `/api` the route decides, since a
///    route may be exempt;
/// 4. an error no handler turned into a response is a 500 with an error id, logged;
/// 5. every response gets the security headers.
struct DefenceMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    let host: WebHost

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = await host.defend(request, context: context, next: next)
        WebHost.addSecurityHeaders(to: &response.headers)
        return response
    }
}

extension WebHost {
    /// The headers every response carries.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' https: data:; style-src 'unsafe-inline'; frame-ancestors 'none'; "
                + "form-action 'self'; base-uri 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        // Not `no-referrer`: under it a browser sends `Origin: null` on the app's own form posts.
        ("Referrer-Policy", "same-origin"),
    ]

    /// ``securityHeaders`` as fields, checked once: a field made from text checks every byte of its value, and the
    /// policy's is 150 bytes, on every response.
    static let securityFields: [HTTPField] = securityHeaders.compactMap { name, value in
        HTTPField.Name(name).map { HTTPField(name: $0, value: value) }
    }

    /// Sets the security headers in `headers`, replacing any of the same name. Fields that start with the host's
    /// `Content-Security-Policy` field are left as they are: only a kept page's do, whose fields start with the
    /// security headers and carry no other field of their names (see ``KeptPage``); no other response the host
    /// makes starts with it (they start with their `Content-Type`, or a redirect's `Location`).
    static func addSecurityHeaders(to headers: inout HTTPFields) {
        if let first = headers.first, first == securityFields[0] { return }
        // One pass over the fields, lengths first: a response rarely carries one of these names, and its names
        // mostly differ from them in length, which costs far less to compare than the names.
        let carriesOne = headers.contains { field in
            let length = field.name.canonicalName.utf8.count
            return securityFields.contains { $0.name.canonicalName.utf8.count == length && $0.name == field.name }
        }
        guard carriesOne else { return headers.append(contentsOf: securityFields) }
        for field in securityFields { headers[fields: field.name] = [field] }
    }

    static let csrfRefusal =
        "This request did not carry the page's token and did not come from this app's own pages (it is stale, or "
        + "came from another site). Reload the page and try again; a script sends the token as the X-CSRF-Token "
        + "header."

    func defend(
        _ request: Request, context: WebRequestContext,
        next: (Request, WebRequestContext) async throws -> Response
    ) async -> Response {
        guard let authority = request.head.authority, options.allows(authority: authority) else {
            let names = options.allowedHosts.sorted().joined(separator: ", ")
            let named = request.head.authority.map { "“\($0)”" } ?? "a request without a Host header"
            return Self.hummingbird(
                bare(
                    problemPage(
                        status: 421, "Wrong host",
                        "This server answers to \(names), not to \(named). To serve it under another name, add the "
                            + "name to WebHostOptions.allowedHosts (ghost: --allow-host NAME).")))
        }
        guard request.headers.count <= options.maximumHeaderCount else {
            return Self.hummingbird(
                bare(
                    problemPage(
                        status: 431, "Too many header fields",
                        "The request has \(request.headers.count) header fields; this server reads at most "
                            + "\(options.maximumHeaderCount) (WebHostOptions.maximumHeaderCount).")))
        }
        if let long = request.headers.first(where: {
            $0.name.rawName.utf8.count + $0.value.utf8.count + 2 > options.maximumHeaderLineSize
        }) {
            return Self.hummingbird(
                bare(
                    problemPage(
                        status: 431, "A header field is too large",
                        "The \(long.name.rawName) header field is \(long.name.rawName.utf8.count + long.value.utf8.count + 2) "
                            + "bytes; this server reads at most \(options.maximumHeaderLineSize) per field "
                            + "(WebHostOptions.maximumHeaderLineSize).")))
        }
        // A request that changes nothing is passed on as it came, without a copy.
        guard Self.isStateChanging(request.method) else { return await answer(request, context: context, next: next) }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: options.maximumBodySize)
        } catch is NIOTooManyBytesError {
            return Self.hummingbird(
                bare(
                    problemPage(
                        status: 413, "The request is too large",
                        "This server reads bodies of at most \(options.maximumBodySize) bytes "
                            + "(WebHostOptions.maximumBodySize).")))
        } catch {
            return Self.hummingbird(bare(problemPage(status: 400, "The request's body could not be read", "\(error)")))
        }
        if !request.uri.path.hasPrefix("/api/"), !isProvablySameSite(request, body: body) {
            return Self.hummingbird(bare(problemPage(status: 403, "This form has expired", Self.csrfRefusal)))
        }
        return await answer(request, context: context, next: next)
    }

    /// `next`'s response to a request the defences let through; an error it throws becomes a response (a 500 with
    /// an error id, unless the error makes its own).
    @inline(__always)
    func answer(
        _ request: Request, context: WebRequestContext,
        next: (Request, WebRequestContext) async throws -> Response
    ) async -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            if let response = try? error.response(from: request, context: context) { return response }
            return Self.hummingbird(bare(faultPage("An error could not be turned into a response", module: nil, error)))
        } catch {
            return Self.hummingbird(bare(faultPage("A request failed", module: nil, error)))
        }
    }

    /// Whether a state-changing request provably comes from this host's own pages: its `Origin` is this host, or
    /// the browser says `Sec-Fetch-Site: same-origin`, or it carries the page's token (the `X-CSRF-Token` header
    /// or the form's first `csrf` field). A foreign `Origin` or a cross-site fetch is refused even with a token.
    func isProvablySameSite(_ request: Request, body: ByteBuffer) -> Bool {
        // `Origin: null` (a sandboxed or privacy-restricted page) proves nothing: `Sec-Fetch-Site` or
        // the token decide.
        if let origin = request.headers[.origin], origin != "null" {
            guard let authority = request.head.authority else { return false }
            return origin == "http://\(authority)" || origin == "https://\(authority)"
        }
        switch Self.field("sec-fetch-site", of: request) {
        case "same-origin": return true
        case "cross-site", "same-site": return false
        default: break
        }
        // The header a script sends the page's token in.
        if let token = Self.field("x-csrf-token", of: request) { return Self.constantTimeEqual(token, csrfToken) }
        let form = String(buffer: body)
        guard let field = form.split(separator: "&").first(where: { $0.hasPrefix("csrf=") }) else { return false }
        return Self.constantTimeEqual(field.dropFirst(5), csrfToken)
    }

    /// The first value of the header field with lowercase name `name`.
    static func field(_ name: String, of request: Request) -> String? {
        request.headers.first { $0.name.canonicalName == name }?.value
    }

    static func isStateChanging(_ method: HTTPRequest.Method) -> Bool {
        switch method {
        case .post, .put, .patch, .delete: true
        default: false
        }
    }
}
