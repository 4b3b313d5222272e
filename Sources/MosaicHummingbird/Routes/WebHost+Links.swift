internal import Foundation
@_spi(Hosting) internal import Mosaic
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
        let link: Deeplink
        do {
            link = try Deeplink(parsing: text, rules: DeeplinkRules(allowedSchemes: [scheme]))
        } catch {
            return await shell(problemPage(status: 400, "This link cannot be opened", error.description))
        }
        return await openOnGet(link)
    }

    /// `GET /dashboard/weather/city?name=Chicago`: the path form of a link.
    func open(path: String, query: String?) async -> WebResponse {
        let text = path + (query.map { "?\($0)" } ?? "")
        let link: Deeplink
        do {
            link = try Deeplink(parsingPath: text, scheme: scheme)
        } catch {
            return await shell(problemPage(status: 400, "This link cannot be opened", error.description))
        }
        return await openOnGet(link)
    }

    /// `POST /open` with `csrf` and `url`: opens a link whose handler may change state, after the confirmation
    /// page (the CSRF check has already passed).
    func open(form body: String) async -> WebResponse {
        let items: [QueryItem]
        do {
            items = try QueryItem.items(parsing: body)
        } catch {
            return await shell(problemPage(status: 400, "This form could not be read", error.description))
        }
        guard let text = items.first(where: { $0.name == "url" })?.value, !text.isEmpty else {
            return await shell(problemPage(status: 400, "No link to open", "Post the link to open as the url field."))
        }
        return await show(await kernel.open(text), of: text)
    }

    /// A link opened by `GET`: applied when its handler only navigates, else a page that asks to confirm with a
    /// `POST`, so that a link from another site (an image, a prefetch) changes nothing.
    func openOnGet(_ link: Deeplink) async -> WebResponse {
        let result = await kernel.openNavigationOnly(link)
        if case .notHandled(let error) = result, error.code == .needsConfirmation {
            return await shell(confirmationPage(link))
        }
        return await show(result, of: link.url)
    }

    /// The page that asks before opening a link that may change the app's state.
    func confirmationPage(_ link: Deeplink) -> Page {
        let url = HTML.escape(link.url)
        return Page(
            title: "Open link",
            main: "<h1>Open this link?</h1><p><code>\(url)</code></p><p>Opening it may change the app's state "
                + "(such as a favourite), so it needs your confirmation.</p>"
                + "<form method=\"post\" action=\"/open\"><input type=\"hidden\" name=\"csrf\" value=\"\(csrfToken)\">"
                + "<input type=\"hidden\" name=\"url\" value=\"\(url)\"><button>Open</button></form>")
    }

    /// The tab a link landed on, with what happened; or a page that says why it was not handled.
    func show(_ result: DeeplinkResult, of link: String) async -> WebResponse {
        switch result {
        case .handled(let tab, let module):
            let by = module.map { ", handled by \($0)" } ?? ""
            return await shell(tabPage(tab, notice: HTML.escape("Opened \(link)\(by).")))
        case .notHandled(let error) where error.code == .handlerFailed || error.code == .storageUnavailable:
            // The handler's fault, not the client's: the details go to the log.
            return await shell(faultPage("A link's handler threw", module: nil, error))
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
}
