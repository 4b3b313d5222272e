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

    /// The field a change form carries when the host has an operator key; nothing otherwise.
    var operatorKeyField: String {
        guard options.operatorKey != nil else { return "" }
        return "<input type=\"password\" name=\"operator_key\" placeholder=\"Operator key\" "
            + "aria-label=\"Operator key\" autocomplete=\"current-password\" required>"
    }
}
