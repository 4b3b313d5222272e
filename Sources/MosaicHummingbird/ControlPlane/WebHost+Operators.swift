internal import Foundation
internal import HTTPTypes
internal import Hummingbird
@_spi(Hosting) internal import Mosaic
internal import MosaicWeb

extension WebHost {
    /// Where a router is served. It decides nothing about who may change the app (the key does), except with the
    /// development opt-in ``WebHostOptions/unsafeChangesWithoutKeyOnLoopback``.
    public enum Exposure: Sendable, Hashable {
        /// Only this machine reaches it (bound to 127.0.0.1, `::1` or `localhost`).
        case loopback
        /// Other machines may reach it.
        case network

        /// The exposure of a server bound to `address`.
        public init(address: String) {
            let loopback = address == "localhost" || address == "::1" || address.hasPrefix("127.")
            self = loopback ? .loopback : .network
        }
    }

    /// The name of the cookie `GET /operator?key=…` sets, which carries the operator key on later requests.
    static let operatorCookie = "mosaic_operator"

    /// What a request presents as the operator key: `Authorization: Bearer` (the scheme in any case, as HTTP says),
    /// else the form's `operator_key` field, else the operator cookie.
    func presentedKey(_ request: Request, form: String) -> String? {
        if let value = Self.field("authorization", of: request) {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        // An empty field is a form the operator cookie fills in.
        if let field = (try? QueryItem.items(parsing: form))?.first(where: { $0.name == "operator_key" }),
            !field.value.isEmpty
        {
            return field.value
        }
        return Self.cookie(Self.operatorCookie, of: request)
    }

    /// Whether the request shows the operator key (cookie or header): an operator's request, which sees operator
    /// detail. Wrong keys count against the client as at a change.
    func isOperator(_ request: Request, client: String) -> Bool {
        guard let key = options.operatorKey, keyAttempts.wait(for: client) == nil,
            let presented = presentedKey(request, form: "")
        else { return false }
        guard key.matches(presented) else {
            keyAttempts.failed(client)
            return false
        }
        keyAttempts.succeeded(client)
        return true
    }

    /// Whether the request came through a proxy: it carries `Forwarded` or an `X-Forwarded-*` field.
    static func isForwarded(_ request: Request) -> Bool {
        request.headers.contains { field in
            let name = field.name.canonicalName
            return name == "forwarded" || name.hasPrefix("x-forwarded-")
        }
    }

    /// Why a request to change the app is refused, or `nil` when it may: it must present the operator key. Without
    /// a key set, nothing changes the app over HTTP, unless the development opt-in lets a local request through.
    func operatorRefusal(
        _ request: Request, client: String, form: String, servedOn exposure: Exposure
    ) -> WebResponse? {
        if let wait = keyAttempts.wait(for: client) {
            let seconds = max(1, wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0))
            var refusal = bare(
                problemPage(
                    status: 429, "Too many wrong keys",
                    "This client presented \(KeyAttempts.limit) wrong operator keys within a minute; try again in "
                        + "\(seconds) s, with the key the host was given (ghost prints it at start)."))
            refusal.headers["Retry-After"] = "\(seconds)"
            return refusal
        }
        guard let key = options.operatorKey else {
            if options.unsafeChangesWithoutKeyOnLoopback, exposure == .loopback, !Self.isForwarded(request) {
                return nil
            }
            return bare(
                problemPage(
                    status: 403, "Nobody may change the app over HTTP",
                    "This host has no operator key, so granting, revoking and resubmitting are refused, however it "
                        + "is reached. Set WebHostOptions.operatorKey (ghost: --operator-key-file FILE, or the key "
                        + "ghost makes and prints at start)."))
        }
        guard let presented = presentedKey(request, form: form) else {
            return bare(
                problemPage(
                    status: 403, "The operator key is needed",
                    "Changing the app (granting or revoking an entitlement, resubmitting an event) needs the operator "
                        + "key: open the URL the host printed at start, enter the key in the form's Operator key "
                        + "field, or send it as `Authorization: Bearer`."))
        }
        guard key.matches(presented) else {
            keyAttempts.failed(client)
            return bare(
                problemPage(
                    status: 403, "Wrong operator key",
                    "The key presented is not this host's operator key. After \(KeyAttempts.limit) wrong keys in a "
                        + "minute, this client must wait."))
        }
        keyAttempts.succeeded(client)
        return nil
    }

    /// `GET /operator?key=…`: the URL a host prints to its operator. With the key, sets the operator cookie (kept
    /// from scripts, and sent to this site only) and sends the operator to Settings; otherwise refuses, as a change
    /// with a wrong key is.
    func signIn(_ request: Request, client: String, then place: ControlPlane) -> WebResponse {
        let query = request.uri.query.flatMap { try? QueryItem.items(parsing: $0) } ?? []
        let form = query.first { $0.name == "key" }.map { "operator_key=\(Self.formEncoded($0.value))" } ?? ""
        if let refusal = operatorRefusal(request, client: client, form: form, servedOn: .network) { return refusal }
        guard let key = options.operatorKey else {
            return bare(problemPage(status: 404, "No operator key", "This host has no operator key to sign in with."))
        }
        return WebResponse(
            status: 303,
            headers: [
                "Location": place.entitlementsPage,
                "Set-Cookie": "\(Self.operatorCookie)=\(key.secret); Path=/; HttpOnly; SameSite=Strict",
                "Cache-Control": "no-store",
            ], body: "")
    }

    /// The value of cookie `name` the request carries.
    static func cookie(_ name: String, of request: Request) -> String? {
        for field in request.headers where field.name.canonicalName == "cookie" {
            for pair in field.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return String(parts[1]).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// `value` as a form field's value.
    static func formEncoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    /// Where the control plane is served: among the app's pages (Settings and Modules), or on the admin port's
    /// operator page, which runs no module code.
    enum ControlPlane {
        case pages
        case adminPort

        /// Where a change of entitlement leads back to.
        var entitlementsPage: String { self == .pages ? "/settings" : "/" }
        /// Where a resubmitted delivery leads back to: the admin port's page, which lists them.
        var undeliveredPage: String { "/" }
        /// Where a restarted module leads back to.
        var modulesPage: String { self == .pages ? "/modules" : "/" }

        /// `page` in the app's shell, or bare on the admin port.
        func present(_ host: WebHost, _ page: Page) async -> WebResponse {
            self == .pages ? await host.shell(page) : host.bare(page)
        }
    }

    /// Adds the changes an operator makes (`POST /settings/entitlements`, `/modules/undelivered`, `/modules/restart`
    /// and `/modules/hold`) to
    /// `router`, refused as ``operatorRefusal(_:client:form:servedOn:)`` says, and the sign-in `GET /operator`;
    /// `wrap` runs an accepted change (the public router passes it through the modules' middleware).
    func addControlPlane(
        to router: DefendedRoutes, servedOn exposure: Exposure, on place: ControlPlane,
        wrap: @escaping @Sendable (Request, String, @escaping @Sendable () async -> WebResponse) async -> Response
    ) {
        let changes: [(String, @Sendable (String) async -> WebResponse)] = [
            ("/settings/entitlements", { await changeEntitlement($0, on: place) }),
            ("/modules/undelivered", { await resubmitDelivery($0, on: place) }),
            ("/modules/restart", { await restartModule($0, on: place) }),
            ("/modules/hold", { await holdModules($0) }),
        ]
        for (path, change) in changes {
            router.post(RouterPath(path)) { request, context in
                let form = await body(of: request)
                if let refusal = operatorRefusal(request, client: context.client, form: form, servedOn: exposure) {
                    return Self.hummingbird(refusal)
                }
                return await wrap(request, form) { await change(form) }
            }
        }
        router.get("/operator") { request, context in
            Self.hummingbird(signIn(request, client: context.client, then: place))
        }
    }

    /// The admin port's page for operators: the entitlements with their grant and revoke forms, and the operator
    /// detail (diagnostics, configuration, stranded handlers, undelivered events with their resubmit forms).
    func operatorPage() async -> WebResponse {
        bare(
            Page(
                title: "Operator",
                main: "<h1>Operator</h1><p>What changes the app, and what only operators read, served on the admin "
                    + "port.</p>" + (await entitlementsForm()) + (await operatorDetail())))
    }

    /// The field a change form carries when the host has an operator key (filled in by the operator cookie, when
    /// the browser has it: the field may then be left empty); nothing otherwise.
    var operatorKeyField: String {
        guard options.operatorKey != nil else { return "" }
        return "<input type=\"password\" name=\"operator_key\" placeholder=\"Operator key\" "
            + "aria-label=\"Operator key\" autocomplete=\"current-password\">"
    }
}
