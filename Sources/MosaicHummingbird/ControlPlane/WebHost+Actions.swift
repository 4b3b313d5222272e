internal import Foundation
@_spi(Hosting) internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb

extension WebHost {
    /// `POST /settings/entitlements` with `csrf`, `entitlement` and `action` (`grant` or `revoke`); the CSRF check
    /// and the operator's have already passed.
    func changeEntitlement(_ body: String, on place: ControlPlane) async -> WebResponse {
        let items: [QueryItem]
        do {
            items = try QueryItem.items(parsing: body)
        } catch {
            return await place.present(self, problemPage(status: 400, "This form could not be read", error.description))
        }
        // The first of a repeated field counts.
        let form = Dictionary(items.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let known = knownEntitlements(granted: await kernel.grantedEntitlements)
        guard let name = form["entitlement"], let entitlement = known.first(where: { $0.rawValue == name }) else {
            let names = known.map(\.rawValue).joined(separator: ", ")
            return await place.present(
                self,
                problemPage(status: 400, "Unknown entitlement", "Name one of the app's entitlements: \(names)."))
        }
        do {
            switch form["action"] {
            case "grant": try await kernel.grant(entitlement)
            case "revoke": try await kernel.revoke(entitlement)
            default:
                return await place.present(
                    self, problemPage(status: 400, "Unknown action", "The action must be grant or revoke."))
            }
        } catch {
            return await place.present(self, faultPage("The entitlement change failed", module: nil, error))
        }
        return WebResponse(status: 303, headers: ["Location": place.entitlementsPage], body: "")
    }

    /// `POST /modules/undelivered` with `csrf` and `delivery`: resubmits an undelivered durable event; the CSRF
    /// check and the operator's have already passed.
    func resubmitDelivery(_ body: String, on place: ControlPlane) async -> WebResponse {
        let items = (try? QueryItem.items(parsing: body)) ?? []
        guard let field = items.first(where: { $0.name == "delivery" }), let delivery = Int64(field.value) else {
            return await place.present(
                self,
                problemPage(status: 400, "No delivery named", "Resubmit a delivery from the list on the Modules page."))
        }
        do {
            guard try await kernel.resubmit(delivery) else {
                return await place.present(
                    self,
                    problemPage(
                        status: 404, "Nothing to resubmit",
                        "Delivery \(delivery) is not waiting (it was resubmitted already, or there is no such delivery), or its handler's module is not installed, so no handler would take it."
                    ))
            }
        } catch {
            return await place.present(self, faultPage("The delivery could not be resubmitted", module: nil, error))
        }
        return WebResponse(status: 303, headers: ["Location": place.undeliveredPage], body: "")
    }

    /// `POST /modules/restart` with `module`: starts a failed module again (one whose process crashed more often
    /// than its restart budget allows, say); the CSRF check and the operator's have already passed.
    func restartModule(_ body: String, on place: ControlPlane) async -> WebResponse {
        let items = (try? QueryItem.items(parsing: body)) ?? []
        guard let name = items.first(where: { $0.name == "module" })?.value, !name.isEmpty else {
            return await place.present(
                self, problemPage(status: 400, "No module named", "Restart a module from the Modules page."))
        }
        do {
            try await kernel.restart(ModuleID(name))
        } catch {
            return await place.present(self, problemPage(status: 404, "Nothing restarted", error.description))
        }
        return WebResponse(status: 303, headers: ["Location": place.modulesPage], body: "")
    }

    /// `POST /modules/hold` with `modules` (identifiers separated by commas): holds them off, live, for a
    /// bisection (`ghost bisect`); none brings back every module as it was before the first hold. Answers in
    /// text: a line `active:` with the active modules in dependency order, then `held off:`.
    func holdModules(_ body: String) async -> WebResponse {
        let items = (try? QueryItem.items(parsing: body)) ?? []
        let names = (items.first { $0.name == "modules" }?.value ?? "").split(separator: ",")
        let ids = Set(names.map { ModuleID(String($0).trimmingCharacters(in: .whitespaces)) })
        do {
            try await kernel.holdOff(ids)
        } catch {
            return WebResponse(status: 400, body: "\(error)\n")
        }
        let active = await kernel.activeModulesInOrder.map(\.rawValue).joined(separator: " ")
        return WebResponse(
            body: "active: \(active)\nheld off: \(ids.map(\.rawValue).sorted().joined(separator: " "))\n")
    }

    /// The module route that declared `method` and `path` under `/api`, or 404. A state-changing request reaches a
    /// route only when `isProvablySameSite` or the route is exempt from the CSRF check. A route whose services
    /// cannot be resolved answers 500 for itself only: other routes are matched without building anything.
    func moduleRoute(
        _ method: WebRoute.Method, _ path: String, _ request: WebRequest, isProvablySameSite: Bool
    ) async -> WebResponse {
        // Matched on what each route declared at registration: only the matching route's handler is built (and
        // only its module started, when it waits on standby).
        for contribution in kernel.contributions(for: .webRoutes) {
            guard let declared = WebRoute.declared(by: contribution.metadata), declared.method == method,
                let parameters = WebRoute.match(declared.path, path)
            else { continue }
            if method.isStateChanging, !declared.isExemptFromCSRFCheck, !isProvablySameSite {
                return .json(Self.jsonError(Self.csrfRefusal), status: 403)
            }
            let route: WebRoute
            do {
                route = try await contribution.content()
            } catch let error as ModuleUnavailableError where error.code == .deactivating {
                // Its module is deactivating: its routes are gone.
                continue
            } catch {
                return faultJSON("A route's services could not be resolved", module: contribution.module, error)
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
