internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb

/// A page before it is wrapped in the shell.
struct Page: Sendable {
    var status = 200
    var title: String
    /// The tab to mark current, if any.
    var tab: String?
    /// The main region's HTML, already escaped.
    var main: String
    /// A line shown above the main region (already escaped), such as what a deeplink did.
    var notice: String?
}

extension WebHost {
    /// `page` inside the shell: tabs, toolbar and menu on top, sidebar on the left. A navigation item whose factory
    /// throws makes the page a 500 (in the bare shell): a menu with an item silently missing hides a fault. A page
    /// at `live` (a tab's path, or `/modules`) keeps itself current (see `WebHost+Live.swift`).
    func shell(_ page: Page, live: String? = nil) async -> WebResponse {
        switch await regions(of: page) {
        case .regions(let regions): document(status: page.status, regions, carriesToken: true, live: live)
        case .other(let response): response
        }
    }

    /// `page`'s regions inside the shell; throws a ``ModuleFault`` when a navigation item's factory throws.
    func shellRegions(_ page: Page) async throws -> ShellRegions {
        let tabs = try await navigation(.tabs, current: page.tab)
        let toolbar = try await navigation(.toolbar)
        let menu = try await navigation(.menu)
        let sidebar = try await navigation(.sidebar)
        return ShellRegions(
            title: "\(page.title) · \(title)",
            navigation: "<nav class=\"tabs\">\(tabs)</nav><nav class=\"toolbar\">\(toolbar)"
                + "<a href=\"/modules\">Modules</a><a href=\"/graph\">Graph</a></nav><nav class=\"menu\">\(menu)</nav>",
            sidebar: sidebar, main: Self.main(page))
    }

    /// `page` in a shell without the modules' navigation: for refusals and faults, which run no module code.
    func bare(_ page: Page) -> WebResponse {
        document(
            status: page.status,
            ShellRegions(
                title: "\(page.title) · \(title)", navigation: "<nav class=\"toolbar\"><a href=\"/\">Home</a></nav>",
                sidebar: "", main: Self.main(page)),
            carriesToken: false, live: nil)
    }

    /// The main region: the notice, if any, then the page.
    static func main(_ page: Page) -> String {
        (page.notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>" } ?? "") + page.main
    }

    /// The HTML document around `regions`. A page of the shell carries the token (in its forms and its
    /// `csrf-token` meta element, for scripts); a bare page, which may answer a refused request, does not. A live
    /// page names its path and version for its script (`/live.js`, from this host: the Content-Security-Policy
    /// allows no inline script). No page is stored by caches.
    func document(status: Int, _ regions: ShellRegions, carriesToken: Bool, live: String?) -> WebResponse {
        let meta = carriesToken ? "<meta name=\"csrf-token\" content=\"\(csrfToken)\">" : ""
        let script = live == nil ? "" : "<script src=\"/live.js\" defer></script>"
        let liveAttributes =
            live.map { " data-live=\"\(HTML.escape($0))\" data-version=\"\(regions.version)\"" } ?? ""
        let body = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            \(meta)\(script)
            <title>\(HTML.escape(regions.title))</title><style>\(Self.style)</style></head>
            <body\(liveAttributes)><header><strong>\(HTML.escape(title))</strong>
            <div class="navigation" data-region="navigation">\(regions.navigation)</div></header>
            <aside class="sidebar" data-region="sidebar">\(regions.sidebar)</aside>
            <main data-region="main">\(regions.main)</main>
            </body></html>
            """
        var headers = ["Cache-Control": "no-store"]
        if status == 503 { headers["Retry-After"] = Self.retryAfter }
        return WebResponse(status: status, contentType: "text/html; charset=utf-8", headers: headers, body: body)
    }

    /// The links of a navigation point's contributions, with their badges; `current` marks one by id. Throws a
    /// ``ModuleFault`` when an item's factory throws. An item whose module is deactivating is left out, and the
    /// page is not kept, so the item shows again if the module stays. The region, and each item, is rendered again
    /// only when what it depends on changes (see ``RenderCache``).
    func navigation(_ point: ExtensionPoint<NavigationItem>, current: String? = nil) async throws -> String {
        try await rendered("region|\(point.id)|\(current ?? "")") {
            var html = ""
            for contribution in kernel.contributions(for: point) {
                let marked = contribution.id == current
                html += try await rendered("item|\(point.id)|\(contribution.module)|\(contribution.id)|\(marked)") {
                    let item: NavigationItem
                    do {
                        item = try await contribution.content()
                    } catch let error as ModuleUnavailableError where error.code == .deactivating {
                        RenderOutcome.markFailed()
                        return ""
                    } catch {
                        throw ModuleFault(module: contribution.module, error: error)
                    }
                    let badge = item.badge.map { " <span class=\"badge\">\(HTML.escape($0))</span>" } ?? ""
                    return "<a data-item=\"\(HTML.escape(contribution.id))\" "
                        + "href=\"\(HTML.escape(HTML.href(item.target, scheme: scheme)))\""
                        + "\(marked ? " aria-current=\"page\"" : "")>"
                        + "\(HTML.escape(contribution.metadata.title))\(badge)</a>"
                }
            }
            return html
        }
    }

    /// The panels of `contributions` to `point`, each a titled section naming its module; a panel whose factory
    /// throws shows the error id, and the log has the error, while one whose module is deactivating is left out. A
    /// panel is built again only when what it depends on changes (see ``RenderCache``); one that failed or was left
    /// out is tried again on the next request.
    func sections(
        _ contributions: [Contribution<Panel>], of point: ExtensionPoint<Panel>, class name: String
    ) async -> String {
        var html = ""
        for contribution in contributions {
            let content: String
            do {
                content = try await rendered("panel|\(point.id)|\(contribution.module)|\(contribution.id)") {
                    HTML.render(try await contribution.content(), scheme: scheme)
                }
            } catch let error as ModuleUnavailableError where error.code == .deactivating {
                RenderOutcome.markFailed()
                continue
            } catch {
                RenderOutcome.markFailed()
                let id = logFault("A panel's factory threw", module: contribution.module, error)
                content = "<p class=\"error\">\(HTML.escape("This panel could not be built (error id \(id))."))</p>"
            }
            html +=
                "<section class=\"\(name)\" data-module=\"\(HTML.escape(contribution.module.rawValue))\" "
                + "data-id=\"\(HTML.escape(contribution.id))\"><h2>\(HTML.escape(contribution.metadata.title))</h2>"
                + "\(content)</section>"
        }
        return html
    }

    static let style = """
        body{font:15px system-ui,sans-serif;margin:0;display:grid;grid-template-columns:12rem 1fr;\
        grid-template-rows:auto 1fr;min-height:100vh;color:#1d2330}\
        header{grid-column:1/3;display:flex;gap:1.5rem;align-items:center;padding:.6rem 1rem;background:#1d2330;color:#fff}\
        header a{color:#cfd8ea;text-decoration:none;margin-right:.8rem}header a[aria-current]{color:#fff;\
        border-bottom:2px solid #7fb0ff}.sidebar{padding:1rem;background:#f1f3f7}.sidebar a{display:block}\
        .navigation{display:contents}main{padding:1rem 1.5rem}.widgets{display:grid;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:1rem}\
        section{border:1px solid #d5dae3;border-radius:8px;padding:.4rem 1rem;margin-bottom:1rem}\
        .notice{background:#e8f1ff;padding:.5rem 1rem;border-radius:6px}.error{color:#a11}\
        table{border-collapse:collapse}td,th{border-bottom:1px solid #d5dae3;padding:.3rem .8rem;text-align:left}
        """
}
