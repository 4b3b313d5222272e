internal import HTTPTypes
internal import Hummingbird
@_spi(Hosting) internal import Mosaic
internal import MosaicWeb

extension WebHost {
    /// Where a router is served, which decides who may change the app through it (grant, revoke, resubmit).
    public enum Exposure: Sendable, Hashable {
        /// Only this machine reaches it (bound to 127.0.0.1, `::1` or `localhost`): whoever can is an operator.
        case loopback
        /// Other machines may reach it: changes need ``WebHostOptions/operatorKey``, and are refused without one.
        case network

        /// The exposure of a server bound to `address`.
        public init(address: String) {
            let loopback = address == "localhost" || address == "::1" || address.hasPrefix("127.")
            self = loopback ? .loopback : .network
        }
    }

    /// Why a request to change the app is refused, or `nil` when it may: with an operator key, the request must
    /// present it (the form's `operator_key` field, or `Authorization: Bearer`); without one, only a router served
    /// on loopback takes changes.
    func operatorRefusal(_ request: Request, form: String, servedOn exposure: Exposure) -> WebResponse? {
        if let key = options.operatorKey {
            let bearer = Self.field("authorization", of: request).flatMap { value in
                value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
            }
            let field = (try? QueryItem.items(parsing: form))?.first { $0.name == "operator_key" }?.value
            if let presented = bearer ?? field, Self.constantTimeEqual(presented, key) { return nil }
            return bare(
                problemPage(
                    status: 403, "The operator key is needed",
                    "Changing the app (granting or revoking an entitlement, resubmitting an event) needs the operator "
                        + "key: enter it in the form's Operator key field, or send it as `Authorization: Bearer`."))
        }
        guard exposure == .loopback else {
            return bare(
                problemPage(
                    status: 403, "Only operators may change the app",
                    "This server is reachable from other machines and has no operator key, so nobody may change the "
                        + "app through it. Set WebHostOptions.operatorKey (ghost: --operator-key-file FILE), or serve "
                        + "on 127.0.0.1."))
        }
        return nil
    }

    /// Where the control plane is served: among the app's pages (Settings and Modules), or on the admin port's
    /// operator page, which runs no module code.
    enum ControlPlane {
        case pages
        case adminPort

        /// Where a change of entitlement leads back to.
        var entitlementsPage: String { self == .pages ? "/settings" : "/" }
        /// Where a resubmitted delivery leads back to.
        var undeliveredPage: String { self == .pages ? "/modules" : "/" }

        /// `page` in the app's shell, or bare on the admin port.
        func present(_ host: WebHost, _ page: Page) async -> WebResponse {
            self == .pages ? await host.shell(page) : host.bare(page)
        }
    }

    /// Adds the changes an operator makes, `POST /settings/entitlements` and `POST /modules/undelivered`, to
    /// `router`, refused as ``operatorRefusal(_:form:servedOn:)`` says; `wrap` runs an accepted change (the public
    /// router passes it through the modules' middleware).
    func addControlPlane(
        to router: Router<BasicRequestContext>, servedOn exposure: Exposure, on place: ControlPlane,
        wrap: @escaping @Sendable (Request, String, @escaping @Sendable () async -> WebResponse) async -> Response
    ) {
        let changes: [(String, @Sendable (String) async -> WebResponse)] = [
            ("/settings/entitlements", { await changeEntitlement($0, on: place) }),
            ("/modules/undelivered", { await resubmitDelivery($0, on: place) }),
        ]
        for (path, change) in changes {
            router.post(RouterPath(path)) { request, _ in
                let form = await body(of: request)
                if let refusal = operatorRefusal(request, form: form, servedOn: exposure) {
                    return Self.hummingbird(refusal)
                }
                return await wrap(request, form) { await change(form) }
            }
        }
    }

    /// The admin port's page for operators: the entitlements with their grant and revoke forms, and the durable
    /// events a handler did not get with their resubmit forms.
    func operatorPage() async -> WebResponse {
        bare(
            Page(
                title: "Operator",
                main: "<h1>Operator</h1><p>What changes the app, served on the admin port.</p>"
                    + (await entitlementsForm()) + (await undeliveredSection())))
    }

    /// The field a change form carries when the host has an operator key; nothing otherwise.
    var operatorKeyField: String {
        guard options.operatorKey != nil else { return "" }
        return "<input type=\"password\" name=\"operator_key\" placeholder=\"Operator key\" "
            + "aria-label=\"Operator key\" autocomplete=\"current-password\" required>"
    }
}
