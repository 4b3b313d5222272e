@_spi(Hosting) internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb

extension WebHost {
    /// `POST /settings/entitlements` with `csrf`, `entitlement` and `action` (`grant` or `revoke`); the CSRF check
    /// has already passed.
    func changeEntitlement(_ body: String) async -> WebResponse {
        let items: [QueryItem]
        do {
            items = try QueryItem.items(parsing: body)
        } catch {
            return await shell(problemPage(status: 400, "This form could not be read", error.description))
        }
        // The first of a repeated field counts.
        let form = Dictionary(items.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let known = knownEntitlements(granted: await kernel.grantedEntitlements)
        guard let name = form["entitlement"], let entitlement = known.first(where: { $0.rawValue == name }) else {
            let names = known.map(\.rawValue).joined(separator: ", ")
            return await shell(
                problemPage(status: 400, "Unknown entitlement", "Name one of the app's entitlements: \(names)."))
        }
        do {
            switch form["action"] {
            case "grant": try await kernel.grant(entitlement)
            case "revoke": try await kernel.revoke(entitlement)
            default:
                return await shell(problemPage(status: 400, "Unknown action", "The action must be grant or revoke."))
            }
        } catch {
            return await shell(faultPage("The entitlement change failed", module: nil, error))
        }
        return WebResponse(status: 303, headers: ["Location": "/settings"], body: "")
    }

    /// `POST /modules/undelivered` with `csrf` and `delivery`: resubmits an undelivered durable event; the CSRF
    /// check has already passed.
    func resubmitDelivery(_ body: String) async -> WebResponse {
        let items = (try? QueryItem.items(parsing: body)) ?? []
        guard let field = items.first(where: { $0.name == "delivery" }), let delivery = Int64(field.value) else {
            return await shell(
                problemPage(status: 400, "No delivery named", "Resubmit a delivery from the list on the Modules page."))
        }
        do {
            guard try await kernel.resubmit(delivery) else {
                return await shell(
                    problemPage(
                        status: 404, "Nothing to resubmit",
                        "Delivery \(delivery) is not waiting (it was resubmitted already, or there is no such delivery), or its handler's module is not installed, so no handler would take it."
                    ))
            }
        } catch {
            return await shell(faultPage("The delivery could not be resubmitted", module: nil, error))
        }
        return WebResponse(status: 303, headers: ["Location": "/modules"], body: "")
    }

    /// A module's route under `/api`, or 404 listing the routes there are. A state-changing request reaches a route
    /// only when `isProvablySameSite` or the route is exempt from the CSRF check. A route factory that throws before
    /// a route matches answers 500: the failed route might have been the one asked for.
    func moduleRoute(
        _ method: WebRoute.Method, _ path: String, _ request: WebRequest, isProvablySameSite: Bool
    ) async -> WebResponse {
        for contribution in kernel.contributions(for: .webRoutes) {
            let route: WebRoute
            do {
                route = try await contribution.content()
            } catch let error as ModuleUnavailableError where error.code == .deactivating {
                // Its module is deactivating: its routes are gone, whichever was asked for.
                continue
            } catch {
                return faultJSON("A route factory threw", module: contribution.module, error)
            }
            guard route.method == method, let parameters = route.match(path) else { continue }
            if method.isStateChanging, !route.isExemptFromCSRFCheck, !isProvablySameSite {
                return .json(Self.jsonError(Self.csrfRefusal), status: 403)
            }
            var request = request
            request.parameters = parameters
            do {
                return try await contribution.call { try await route.handle(request) }
            } catch {
                return faultJSON("A route's handler threw", module: contribution.module, error)
            }
        }
        return .json(Self.jsonError("No active module serves \(method.rawValue) /api\(path)."), status: 404)
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    static func constantTimeEqual(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
