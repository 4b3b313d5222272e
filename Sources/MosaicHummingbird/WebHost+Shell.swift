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
    /// `page` inside the shell: tabs, toolbar and menu on top, sidebar on the left.
    func shell(_ page: Page) async -> WebResponse {
        let notice = page.notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>" } ?? ""
        let body = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>\(HTML.escape(page.title)) · \(HTML.escape(title))</title><style>\(Self.style)</style></head>
            <body><header><strong>\(HTML.escape(title))</strong>
            <nav class="tabs">\(await navigation(.tabs, current: page.tab))</nav>
            <nav class="toolbar">\(await navigation(.toolbar))<a href="/modules">Modules</a><a href="/graph">Graph</a></nav>
            <nav class="menu">\(await navigation(.menu))</nav></header>
            <aside class="sidebar">\(await navigation(.sidebar))</aside>
            <main>\(notice)\(page.main)</main>
            </body></html>
            """
        return WebResponse(
            status: page.status, contentType: "text/html; charset=utf-8", headers: Self.securityHeaders, body: body)
    }

    /// The links of a navigation point's contributions, with their badges; `current` marks one by id.
    func navigation(_ point: ExtensionPoint<NavigationItem>, current: String? = nil) async -> String {
        var html = ""
        for contribution in kernel.contributions(for: point) {
            guard let item = try? await contribution.content() else { continue }
            let marked = contribution.id == current ? " aria-current=\"page\"" : ""
            let badge = item.badge.map { " <span class=\"badge\">\(HTML.escape($0))</span>" } ?? ""
            html +=
                "<a data-item=\"\(HTML.escape(contribution.id))\" "
                + "href=\"\(HTML.escape(HTML.href(item.target, scheme: scheme)))\"\(marked)>"
                + "\(HTML.escape(contribution.metadata.title))\(badge)</a>"
        }
        return html
    }

    /// The panels of `contributions`, each a titled section naming its module.
    func sections(_ contributions: [Contribution<Panel>], class name: String) async -> String {
        var html = ""
        for contribution in contributions {
            let content: String
            do {
                content = HTML.render(try await contribution.content(), scheme: scheme)
            } catch {
                content = "<p class=\"error\">\(HTML.escape("This panel could not be built: \(error)"))</p>"
            }
            html +=
                "<section class=\"\(name)\" data-module=\"\(HTML.escape(contribution.module.rawValue))\" "
                + "data-id=\"\(HTML.escape(contribution.id))\"><h2>\(HTML.escape(contribution.metadata.title))</h2>"
                + "\(content)</section>"
        }
        return html
    }

    static let securityHeaders = [
        "Content-Security-Policy": "default-src 'self'; img-src 'self' https: data:; style-src 'unsafe-inline'; "
            + "frame-ancestors 'none'; form-action 'self'",
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    ]

    static let style = """
        body{font:15px system-ui,sans-serif;margin:0;display:grid;grid-template-columns:12rem 1fr;\
        grid-template-rows:auto 1fr;min-height:100vh;color:#1d2330}\
        header{grid-column:1/3;display:flex;gap:1.5rem;align-items:center;padding:.6rem 1rem;background:#1d2330;color:#fff}\
        header a{color:#cfd8ea;text-decoration:none;margin-right:.8rem}header a[aria-current]{color:#fff;\
        border-bottom:2px solid #7fb0ff}.sidebar{padding:1rem;background:#f1f3f7}.sidebar a{display:block}\
        main{padding:1rem 1.5rem}.widgets{display:grid;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:1rem}\
        section{border:1px solid #d5dae3;border-radius:8px;padding:.4rem 1rem;margin-bottom:1rem}\
        .notice{background:#e8f1ff;padding:.5rem 1rem;border-radius:6px}.error{color:#a11}\
        table{border-collapse:collapse}td,th{border-bottom:1px solid #d5dae3;padding:.3rem .8rem;text-align:left}
        """
}
