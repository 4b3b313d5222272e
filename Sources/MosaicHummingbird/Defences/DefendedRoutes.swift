internal import HTTPTypes
internal import Hummingbird

/// The routes of a router of the host, each behind the host's defences: the route's responder runs
/// ``WebHost/defend(_:context:next:)`` around its handler and adds the security headers, as ``DefenceMiddleware``
/// does, without Hummingbird's middleware chain between (seven async frames a request).
///
/// ``finished()`` returns the router with ``DefenceMiddleware`` added for what no route of the host answers:
/// requests no route matches (Hummingbird builds its not-found responder with every middleware), and routes a caller
/// adds to the router later.
struct DefendedRoutes {
    /// The router the routes are added to.
    let router = Router(context: WebRequestContext.self, options: .autoGenerateHeadEndpoints)
    /// The host whose defences the routes are behind.
    let host: WebHost

    /// Answers `method` requests for `path` with `handle`, behind the defences.
    func on(
        _ path: RouterPath, method: HTTPRequest.Method,
        use handle: @escaping @Sendable (Request, WebRequestContext) async throws -> Response
    ) {
        router.on(path, method: method, responder: DefendedResponder(host: host, handle: handle))
    }

    /// Answers `GET` (and `HEAD`) requests for `path` with `handle`, behind the defences.
    func get(
        _ path: RouterPath, use handle: @escaping @Sendable (Request, WebRequestContext) async throws -> Response
    ) {
        on(path, method: .get, use: handle)
    }

    /// Answers `POST` requests for `path` with `handle`, behind the defences.
    func post(
        _ path: RouterPath, use handle: @escaping @Sendable (Request, WebRequestContext) async throws -> Response
    ) {
        on(path, method: .post, use: handle)
    }

    /// The router, with the defences as its middleware for requests no route matches and routes added later.
    func finished() -> Router<WebRequestContext> {
        router.add(middleware: DefenceMiddleware(host: host))
        return router
    }
}

/// A route of the host behind its defences (see ``DefendedRoutes``).
struct DefendedResponder: HTTPResponder {
    let host: WebHost
    let handle: @Sendable (Request, WebRequestContext) async throws -> Response

    func respond(to request: Request, context: WebRequestContext) async throws -> Response {
        var response = await host.defend(request, context: context, next: handle)
        WebHost.addSecurityHeaders(to: &response.headers)
        return response
    }
}
