internal import HTTPTypes
internal import Hummingbird

/// The routes of a router of the host, each behind the host's defences: the route's responder runs
/// ``WebHost/defend(_:context:next:)`` around it and adds the security headers, as ``DefenceMiddleware`` does,
/// without Hummingbird's middleware chain between (seven async frames a request).
///
/// ``finished()`` returns the router with ``DefenceMiddleware`` added for what no route of the host answers:
/// requests no route matches (Hummingbird builds its not-found responder with every middleware), and routes a caller
/// adds to the router later.
struct DefendedRoutes: RouterMethods {
    typealias Context = WebRequestContext

    /// The router the routes are added to.
    let router = Router(context: WebRequestContext.self, options: .autoGenerateHeadEndpoints)
    /// The host whose defences the routes are behind.
    let host: WebHost

    @discardableResult
    func on<Route: HTTPResponder>(
        _ path: RouterPath, method: HTTPRequest.Method, responder: Route
    ) -> Self where Route.Context == WebRequestContext {
        router.on(path, method: method, responder: DefendedResponder(host: host, route: responder))
        return self
    }

    /// Not for the host's routes: a middleware added here would run outside the defences.
    func add(middleware: any MiddlewareProtocol<Request, Response, WebRequestContext>) -> Self {
        preconditionFailure("The host's routes take no middleware; add it to the router that finished() returns.")
    }

    /// The router, with the defences as its middleware for requests no route matches and routes added later.
    func finished() -> Router<WebRequestContext> {
        router.add(middleware: DefenceMiddleware(host: host))
        return router
    }
}

/// A route of the host behind its defences (see ``DefendedRoutes``).
struct DefendedResponder<Route: HTTPResponder>: HTTPResponder where Route.Context == WebRequestContext {
    let host: WebHost
    let route: Route

    func respond(to request: Request, context: WebRequestContext) async throws -> Response {
        var response = await host.defend(request, context: context) { try await route.respond(to: $0, context: $1) }
        WebHost.addSecurityHeaders(to: &response.headers)
        return response
    }
}
