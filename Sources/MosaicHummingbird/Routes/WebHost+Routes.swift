internal import Foundation
internal import HTTPTypes
public import Hummingbird
@_spi(Hosting) internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb
internal import NIOCore

extension WebHost {
    /// The host's routes: the tabs, deeplinks in both forms, the system pages, the settings form, and the
    /// modules' own routes under `/api`, all behind the host's defences (see ``WebHost``); `HEAD` answers wherever
    /// `GET` does. Module middleware wraps every response.
    ///
    /// Changing the app always needs ``WebHostOptions/operatorKey``; `exposure` (where the router is served, which
    /// ``WebServer`` passes) matters only to the development opt-in
    /// ``WebHostOptions/unsafeChangesWithoutKeyOnLoopback``. `/metrics` and operator detail are served on the admin
    /// port only.
    public func router(servedOn exposure: Exposure = .network) -> Router<WebRequestContext> {
        let router = DefendedRoutes(host: self)
        router.get("/") { _, _ in Response.redirect(to: "/dashboard", type: .found) }
        // A link in path form, `/TAB/FEATURE…`.
        let link: @Sendable (Request, WebRequestContext) async -> Response = { request, _ in
            await respond(request) { _ in await open(path: request.uri.path, query: request.uri.query) }
        }
        // The landing page, first of all: the router compares a path with the constant routes in the order they were
        // added before it tries `/:tab`, and this is the page asked for most. A constant first component hides
        // `/:tab/**`, so the landing tab's links have a route of their own.
        router.get("/dashboard") { request, _ in await respond(request, kept: { await tabResponse("dashboard") }) }
        router.get("/dashboard/**", use: link)
        addOperationsRoutes(to: router, detailed: false, metrics: false)
        router.get("/modules") { request, _ in
            await respond(request) { _ in await shell(modulesPage(), live: "/modules") }
        }
        router.get("/modules/:id") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await respond(request) { _ in await shell(canvasPage(id)) }
        }
        router.get("/live") { request, context in await liveResponse(request, from: context.client) }
        router.get("/live.js") { request, _ in
            await respond(request) { _ in
                WebResponse(contentType: "text/javascript; charset=utf-8", body: Self.liveScript)
            }
        }
        router.get("/graph") { request, _ in await respond(request) { _ in await shell(graphPage()) } }
        router.get("/graph.svg") { request, _ in
            await respond(request) { _ in WebResponse(contentType: "image/svg+xml", body: await graphSVG()) }
        }
        // Declared beside the settings form's POST route, which would otherwise hide the tab from `/:tab`.
        router.get("/settings") { request, _ in await respond(request, kept: { await tabResponse("settings") }) }
        router.get("/open") { request, _ in await respond(request) { _ in await open(query: request.uri.query) } }
        router.post("/open") { request, _ in
            let form = await body(of: request)
            return await respond(request, body: form) { _ in await open(form: form) }
        }
        addControlPlane(to: router, servedOn: exposure, on: .pages) { request, form, change in
            await respond(request, body: form) { _ in await change() }
        }
        let methods: [(WebRoute.Method, HTTPRequest.Method)] = [
            (.get, .get), (.post, .post), (.put, .put), (.patch, .patch), (.delete, .delete),
        ]
        for (method, httpMethod) in methods {
            router.on("/api/**", method: httpMethod) { request, context in
                let path = "/" + context.parameters.getCatchAll().joined(separator: "/")
                guard method.isStateChanging else {
                    return await respond(request) { web in
                        await moduleRoute(method, path, web, isProvablySameSite: false)
                    }
                }
                let body = await body(of: request)
                let sameSite = isProvablySameSite(request, body: ByteBuffer(string: body))
                return await respond(request, body: body) { web in
                    await moduleRoute(method, path, web, isProvablySameSite: sameSite)
                }
            }
        }
        router.get("/:tab") { request, context in
            let tab = context.parameters.get("tab") ?? ""
            return await respond(request, kept: { await tabResponse(tab) })
        }
        router.get("/:tab/**", use: link)
        return router.finished()
    }

    /// The page of tab `tab` in the shell, kept until what it shows changes: a request for an unchanged page only
    /// compares versions, and is answered with the bytes made when the page was rendered. A page in which a part
    /// failed, or an unknown tab's 404, is not kept.
    func tabResponse(_ tab: String) async -> KeptPage {
        await rendered(
            "page|" + tab, keepIf: { $0.response.status == 200 },
            render: {
                switch await livePage("/\(tab)") {
                case .regions(let regions):
                    KeptPage(document(status: 200, regions, carriesToken: true, live: "/\(tab)"))
                case .other(let response): KeptPage(response)
                }
            })
    }

    /// The body of a state-changing request as text; the defences have already read it within the size limit.
    func body(of request: Request) async -> String {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: options.maximumBodySize) else { return "" }
        return String(buffer: buffer)
    }

    /// Runs the modules' middleware around a kept page, as ``respond(_:body:answered:_:)`` does: when the response
    /// the middleware return is the page's, or the page's with header fields added or changed, it is answered with
    /// what was made when the page was rendered (its bytes, and its fields with the security headers).
    func respond(_ request: Request, kept page: @Sendable () async -> KeptPage) async -> Response {
        let answered = AnsweredPage()
        return await respond(request, answered: answered) { _ in
            let kept = await page()
            answered.keep(kept)
            return kept.response
        }
    }

    /// Runs the modules' middleware, outermost first, around `page`, and converts the result for Hummingbird (from
    /// what was made with the page `answered` holds, when `page` answered with a kept one). A middleware whose
    /// factory or handler throws answers 500, and the request goes no further: middleware may be what guards the
    /// page.
    func respond(
        _ request: Request, body: String = "", answered: AnsweredPage? = nil,
        _ page: @Sendable (WebRequest) async -> WebResponse
    ) async -> Response {
        let web = WebRequest(
            method: request.method.rawValue, path: request.uri.path,
            query: request.uri.query.map { (try? QueryItem.items(parsing: $0)) ?? [] } ?? [], body: body)
        let contributions = kernel.contributions(for: .webMiddleware)
        var middlewares: [WebMiddleware] = []
        middlewares.reserveCapacity(contributions.count)
        for contribution in contributions {
            // Built once per activation: after the first request, read without a call.
            if let handler = contribution.keptContent {
                middlewares.append(handler)
            } else {
                do {
                    middlewares.append(try await contribution.content())
                } catch {
                    return Self.hummingbird(
                        bare(faultPage("A middleware factory threw", module: contribution.module, error)))
                }
            }
        }
        do {
            let response = try await Self.pass(web, through: middlewares, of: contributions, from: 0, to: page)
            return Self.hummingbird(response, kept: answered?.page)
        } catch let fault as ModuleFault {
            return Self.hummingbird(bare(faultPage("A middleware threw", module: fault.module, fault.error)))
        } catch {
            return Self.hummingbird(bare(faultPage("A middleware threw", module: nil, error)))
        }
    }

    /// Passes `request` through `middlewares` (those of `contributions`) from `index` on, each as a call of its
    /// module, and then to `page`. The closures are not kept, so none is allocated per request.
    static func pass(
        _ request: WebRequest, through middlewares: [WebMiddleware], of contributions: [Contribution<WebMiddleware>],
        from index: Int, to page: @Sendable (WebRequest) async -> WebResponse
    ) async throws -> WebResponse {
        guard index < middlewares.count else { return await page(request) }
        let module = contributions[index].module
        // What the middleware passes the request on to is the host's code (and other modules', which enter their
        // own calls), not the middleware module's.
        let host = HostContext()
        do {
            return try await contributions[index].call {
                try await middlewares[index].handle(request) { request in
                    try await host.run {
                        try await pass(request, through: middlewares, of: contributions, from: index + 1, to: page)
                    }
                }
            }
        } catch let fault as ModuleFault {
            throw fault
        } catch {
            throw ModuleFault(module: module, error: error)
        }
    }

    /// At most this many header fields of a module's response are sent (HTTP servers refuse far fewer anyway).
    static let responseHeaderLimit = 200

    /// `response` for Hummingbird; from what was made with `kept` when it is that page's response, or the page's
    /// with header fields added or changed (see ``KeptPage/answer(_:)``).
    static func hummingbird(_ response: WebResponse, kept: KeptPage? = nil) -> Response {
        if let kept, let answer = kept.answer(response) { return answer }
        // A status HTTP does not have (a module's route or middleware made it) is answered as the fault it is.
        guard (200...599).contains(response.status) else {
            return hummingbird(
                WebResponse(
                    status: 500,
                    body: "The response had status \(response.status), which is not a final HTTP status (200 to "
                        + "599); a module's route or middleware made it."))
        }
        var headers = HTTPFields()
        // Room for `Content-Length` and the security headers too: the fields are allocated once per response.
        headers.reserveCapacity(2 + response.headers.count + securityFields.count)
        headers.append(
            response.contentType == htmlContentType.value
                ? htmlContentType : HTTPField(name: .contentType, value: response.contentType))
        for (name, value) in response.headers.prefix(Self.responseHeaderLimit) {
            guard let field = HTTPField.Name(name) else { continue }
            // Replacing searches the fields; only `Content-Type`, or a name given twice in different case, is there.
            if headers.contains(field) {
                headers[field] = value
            } else {
                headers.append(HTTPField(name: field, value: value))
            }
        }
        return Response(
            status: HTTPResponse.Status(code: response.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: response.body)))
    }
}

extension WebHost {
    /// The type of every page, checked once: a field made from text checks every byte of its value.
    static let htmlContentType = HTTPField(name: .contentType, value: "text/html; charset=utf-8")
}

/// An error thrown by a module's middleware, with the module.
struct ModuleFault: Error {
    let module: ModuleID
    let error: any Error
}
