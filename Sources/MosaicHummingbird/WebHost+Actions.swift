internal import Foundation
internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb

extension WebHost {
    /// `GET /open?url=ghost://dashboard/weather/city?name=Chicago`: the link may be given as is or
    /// percent-encoded; it must be the last parameter, since everything after `url=` is the link.
    func open(query: String?) async -> WebResponse {
        guard let query, query.hasPrefix("url="), query.count > 4 else {
            return await shell(
                problemPage(
                    status: 400, "No link to open", "Add the link to open: /open?url=\(scheme)://tab/feature/action"))
        }
        let raw = String(query.dropFirst(4))
        let text = raw.contains("://") ? raw : raw.removingPercentEncoding ?? raw
        return await show(await kernel.open(text), of: text)
    }

    /// `GET /dashboard/weather/city?name=Chicago`: the path form of a link.
    func open(path: String, query: String?) async -> WebResponse {
        let text = path + (query.map { "?\($0)" } ?? "")
        do {
            let link = try Deeplink(parsingPath: text, scheme: scheme)
            return await show(await kernel.open(link), of: link.url)
        } catch {
            return await shell(problemPage(status: 400, "This link cannot be opened", error.description))
        }
    }

    /// The tab a link landed on, with what happened; or a page that says why it was not handled.
    func show(_ result: DeeplinkResult, of link: String) async -> WebResponse {
        switch result {
        case .handled(let tab, let module):
            let by = module.map { ", handled by \($0)" } ?? ""
            return await shell(tabPage(tab, notice: HTML.escape("Opened \(link)\(by).")))
        case .notHandled(let error):
            let status =
                switch error.code {
                case .noHandler, .moduleInactive, .notEntitled: 404
                case .pendingLimit: 503
                default: 400
                }
            return await shell(problemPage(status: status, "This link was not handled", error.description))
        }
    }

    /// `POST /settings/entitlements` with `csrf`, `entitlement` and `action` (`grant` or `revoke`).
    func changeEntitlement(_ body: String?) async -> WebResponse {
        let items: [QueryItem]
        do {
            items = try QueryItem.items(parsing: body ?? "")
        } catch {
            return await shell(problemPage(status: 400, "This form could not be read", error.description))
        }
        // The first of a repeated field counts.
        let form = Dictionary(items.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        guard let token = form["csrf"], Self.constantTimeEqual(token, csrfToken) else {
            return await shell(
                problemPage(
                    status: 403, "This form has expired",
                    "The form did not carry this server's token (it is stale, or came from another site). "
                        + "Reload Settings and try again."))
        }
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
            return await shell(problemPage(status: 503, "The change was not made", error.description))
        }
        return WebResponse(status: 303, headers: ["Location": "/settings"], body: "")
    }

    /// A module's route under `/api`, or 404 listing the routes there are.
    func moduleRoute(_ method: WebRoute.Method, _ path: String, _ request: WebRequest) async -> WebResponse {
        for contribution in kernel.contributions(for: .webRoutes) {
            guard let route = try? await contribution.content(), route.method == method,
                let parameters = route.match(path)
            else { continue }
            var request = request
            request.parameters = parameters
            do {
                return try await route.handle(request)
            } catch {
                return .json(Self.jsonError("\(contribution.module) could not answer: \(error)"), status: 500)
            }
        }
        return .json(Self.jsonError("No active module serves \(method.rawValue) /api\(path)."), status: 404)
    }

    static func jsonError(_ message: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = (try? encoder.encode(["error": message])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
