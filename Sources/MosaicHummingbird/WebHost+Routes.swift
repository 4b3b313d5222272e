internal import Foundation
internal import HTTPTypes
public import Hummingbird
internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb

extension WebHost {
    /// The host's routes: the tabs, deeplinks in both forms, the system pages, the settings form, and the
    /// modules' own routes under `/api`. Module middleware wraps every response.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/") { _, _ in Response.redirect(to: "/dashboard", type: .found) }
        router.get("/modules") { request, _ in await respond(request) { _ in await shell(modulesPage()) } }
        router.get("/graph") { request, _ in await respond(request) { _ in await shell(graphPage()) } }
        router.get("/graph.svg") { request, _ in
            await respond(request) { _ in
                WebResponse(contentType: "image/svg+xml", headers: Self.securityHeaders, body: await graphSVG())
            }
        }
        // Declared beside the settings form's POST route, which would otherwise hide the tab from `/:tab`.
        router.get("/settings") { request, _ in await respond(request) { _ in await shell(tabPage("settings")) } }
        router.get("/open") { request, _ in await respond(request) { _ in await open(query: request.uri.query) } }
        router.post("/settings/entitlements") { request, _ in
            let form = try? await request.body.collect(upTo: 16_384)
            return await respond(request) { _ in await changeEntitlement(form.map { String(buffer: $0) }) }
        }
        router.get("/api/**") { request, context in
            let path = "/" + context.parameters.getCatchAll().joined(separator: "/")
            return await respond(request) { web in await moduleRoute(.get, path, web) }
        }
        router.post("/api/**") { request, context in
            let path = "/" + context.parameters.getCatchAll().joined(separator: "/")
            return await respond(request) { web in await moduleRoute(.post, path, web) }
        }
        router.get("/:tab") { request, context in
            let tab = context.parameters.get("tab") ?? ""
            return await respond(request) { _ in await shell(tabPage(tab)) }
        }
        router.get("/:tab/**") { request, _ in
            await respond(request) { _ in await open(path: request.uri.path, query: request.uri.query) }
        }
        return router
    }

    /// Runs the modules' middleware, outermost first, around `page`, and converts the result for Hummingbird.
    func respond(_ request: Request, _ page: @escaping @Sendable (WebRequest) async -> WebResponse) async -> Response {
        let web = WebRequest(
            method: request.method.rawValue, path: request.uri.path,
            query: (try? QueryItem.items(parsing: request.uri.query ?? "")) ?? [])
        var next: @Sendable (WebRequest) async throws -> WebResponse = { await page($0) }
        for contribution in kernel.contributions(for: .webMiddleware).reversed() {
            guard let middleware = try? await contribution.content() else { continue }
            let inner = next
            next = { try await middleware.handle($0, inner) }
        }
        let response: WebResponse
        do {
            response = try await next(web)
        } catch {
            response = await shell(
                problemPage(status: 500, "Something went wrong", "A module's middleware failed: \(error)"))
        }
        return Self.hummingbird(response)
    }

    static func hummingbird(_ response: WebResponse) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = response.contentType
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return Response(
            status: HTTPResponse.Status(code: response.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: response.body)))
    }
}
