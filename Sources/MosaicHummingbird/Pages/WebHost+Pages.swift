internal import Mosaic
internal import MosaicKernel
internal import MosaicWeb

extension WebHost {
    /// The page of tab `tab`, or a 404 page naming the tabs there are.
    func tabPage(_ tab: String, notice: String? = nil) async -> Page {
        let tabs = kernel.contributions(for: .tabs).map(\.id)
        let main: String
        switch tab {
        case "dashboard":
            main =
                await sections(kernel.contributions(for: .dashboard), of: .dashboard, class: "panel")
                + "<div class=\"widgets\">\(await sections(kernel.contributions(for: .dashboardWidgets), of: .dashboardWidgets, class: "widget"))</div>"
        case "settings":
            main =
                await sections(kernel.contributions(for: .settings), of: .settings, class: "panel") + entitlementsForm()
        default:
            guard tabs.contains(tab) else {
                let known = tabs.isEmpty ? "none are active" : tabs.joined(separator: ", ")
                return Page(
                    status: 404, title: "Not found", tab: nil,
                    main: "<h1>No tab named “\(HTML.escape(tab))”</h1><p>\(HTML.escape("The tabs are: \(known)."))</p>",
                    notice: notice)
            }
            let pages = kernel.contributions(for: .tabPages).filter { $0.metadata.tab == tab }
            main = pages.isEmpty ? "<p>Nothing here yet.</p>" : await sections(pages, of: .tabPages, class: "panel")
        }
        let title = kernel.contributions(for: .tabs).first { $0.id == tab }?.metadata.title ?? tab
        return Page(title: title, tab: tab, main: "<h1>\(HTML.escape(title))</h1>\(main)", notice: notice)
    }

    /// Every module with its version, state, reason and activation time, then the diagnostics.
    func modulesPage() async -> Page {
        let report = await kernel.report()
        let rows = report.modules.map { module in
            "<tr data-module=\"\(HTML.escape(module.id.rawValue))\" data-state=\"\(module.state.name)\">"
                + "<td><a href=\"/modules/\(HTML.escape(module.id.rawValue))\">\(HTML.escape(module.id.rawValue))</a></td><td>\(HTML.escape(module.version.text))</td>"
                + "<td>\(module.state.name)</td><td>\(module.activationTime.map(Self.milliseconds) ?? "")</td>"
                + "<td data-cause>\(HTML.escape(module.cause?.description ?? ""))</td>"
                + "<td>\(HTML.escape(Self.phaseTimes(module.phaseTimes)))</td>"
                + "<td data-process>\(HTML.escape(module.processSummary))</td>"
                + "<td>\(HTML.escape(module.explanation))</td></tr>"
        }
        return Page(
            title: "Modules",
            main: "<h1>Modules</h1><p>\(HTML.escape(report.summary))</p><table><thead><tr><th>Module</th>"
                + "<th>Version</th><th>State</th><th>Activation</th><th>Cause</th><th>Phases</th><th>Process</th><th>Reason</th></tr></thead><tbody>"
                + rows.joined() + "</tbody></table>" + exemptRoutes()
                + "<p>Operator detail (diagnostics, configuration, durable events a handler did not get) is on the "
                + "admin port's page, for operators only.</p>")
    }

    /// What operators read and nobody else: the failed modules with their restart forms, the diagnostics, each
    /// module's configuration, the stranded handlers and the undelivered events, with their resubmit forms.
    func operatorDetail() async -> String {
        let report = await kernel.report()
        let diagnostics = report.diagnostics.map { "<li>\(HTML.escape($0.description))</li>" }
        return failedSection(report) + (await configurationSection(report.modules.map(\.id)))
            + (await strandedSection()) + (await undeliveredSection())
            + (diagnostics.isEmpty ? "" : "<h2>Diagnostics</h2><ul>\(diagnostics.joined())</ul>")
    }

    /// The failed modules, each with why, its process's last crash when it runs isolated, and a form that starts it
    /// again; nothing when none is failed.
    func failedSection(_ report: BootReport) -> String {
        let rows = report.modules.filter { $0.state.name == "failed" }.map { module in
            "<tr data-failed=\"\(HTML.escape(module.id.rawValue))\"><td>\(HTML.escape(module.id.rawValue))</td>"
                + "<td>\(HTML.escape(module.explanation))</td><td>\(HTML.escape(module.processSummary))</td>"
                + "<td><form method=\"post\" action=\"/modules/restart\">"
                + "<input type=\"hidden\" name=\"csrf\" value=\"\(csrfToken)\">"
                + "<input type=\"hidden\" name=\"module\" value=\"\(HTML.escape(module.id.rawValue))\">"
                + "\(operatorKeyField)<button>Restart</button></form></td></tr>"
        }
        guard !rows.isEmpty else { return "" }
        return "<h2>Failed modules</h2><p>Restarting one starts it again, and forgets the crashes counted against "
            + "its restart budget.</p><table><thead><tr><th>Module</th><th>Why</th><th>Process</th><th></th></tr>"
            + "</thead><tbody>\(rows.joined())</tbody></table>"
    }

    /// Durable events a handler did not get (parked or abandoned), each with a form that resubmits it; nothing
    /// when there are none.
    func undeliveredSection() async -> String {
        let undelivered: [UndeliveredEvent]
        do {
            undelivered = try await kernel.undeliveredEvents(limit: 100)
        } catch {
            return "<h2>Undelivered events</h2><p>The outbox could not be read: \(HTML.escape(error.description))</p>"
        }
        guard !undelivered.isEmpty else { return "" }
        let rows = undelivered.map { event in
            "<tr data-delivery=\"\(event.id)\"><td>\(HTML.escape(event.type))</td><td>\(HTML.escape(event.subscriber))</td>"
                + "<td>\(event.reason.rawValue)</td><td>\(event.attempts)</td><td>\(HTML.escape(event.lastError))</td>"
                + "<td><form method=\"post\" action=\"/modules/undelivered\">"
                + "<input type=\"hidden\" name=\"csrf\" value=\"\(csrfToken)\">"
                + "<input type=\"hidden\" name=\"delivery\" value=\"\(event.id)\">\(operatorKeyField)"
                + "<button>Resubmit</button></form></td></tr>"
        }
        return "<h2>Undelivered events</h2><p>Durable events a handler did not get: parked after every attempt "
            + "failed, or abandoned when the handler's module was uninstalled. Resubmitting gives the handler a new "
            + "round of attempts.</p><table><thead><tr><th>Event</th><th>Handler</th><th>Why</th><th>Attempts</th>"
            + "<th>Last error</th><th></th></tr></thead><tbody>\(rows.joined())</tbody></table>"
    }

    /// Durable handlers nothing runs any more (renamed, or of a module no longer installed), with their waiting
    /// deliveries and when those are abandoned; nothing when there are none.
    func strandedSection() async -> String {
        let stranded: [StrandedHandler]
        do {
            stranded = try await kernel.strandedHandlers()
        } catch {
            return "<h2>Stranded handlers</h2><p>The outbox could not be read: \(HTML.escape(error.description))</p>"
        }
        guard !stranded.isEmpty else { return "" }
        let rows = stranded.map { handler in
            "<tr data-stranded=\"\(HTML.escape(handler.subscriber))\"><td>\(HTML.escape(handler.subscriber))</td>"
                + "<td>\(handler.pending)</td><td>\(handler.reason.rawValue)</td>"
                + "<td>\(HTML.escape(Self.duration(handler.idle)))</td>"
                + "<td>\(HTML.escape(Self.duration(handler.abandonedIn)))</td></tr>"
        }
        return
            "<h2>Stranded handlers</h2><p>Durable handlers with deliveries waiting that nothing runs: renamed, or of "
            + "a module no longer installed. Their deliveries are abandoned (and listed below, resubmittable) once "
            + "nothing ran them for DurableEventOptions.strandedRetention.</p><table><thead><tr><th>Handler</th>"
            + "<th>Waiting</th><th>Why</th><th>Not run for</th><th>Abandoned in</th></tr></thead><tbody>"
            + rows.joined() + "</tbody></table>"
    }

    /// The active modules' routes that accept requests from other sites (exempt from the CSRF check), so that
    /// whoever runs the app sees each one.
    func exemptRoutes() -> String {
        var rows = ""
        for contribution in kernel.contributions(for: .webRoutes) {
            guard let route = WebRoute.declared(by: contribution.metadata), route.isExemptFromCSRFCheck else {
                continue
            }
            let path = HTML.escape("/api" + route.path)
            rows +=
                "<tr data-exempt-route=\"\(route.method.rawValue) \(path)\"><td>"
                + "\(HTML.escape(contribution.module.rawValue))</td><td>\(route.method.rawValue)</td><td>\(path)</td></tr>"
        }
        guard !rows.isEmpty else { return "" }
        return "<h2>Routes open to other sites</h2><p>These routes accept state-changing requests without the "
            + "page's token (their modules serve clients other than browsers):</p><table><thead><tr><th>Module</th>"
            + "<th>Method</th><th>Path</th></tr></thead><tbody>\(rows)</tbody></table>"
    }

    /// The graph page: the SVG, inline.
    func graphPage() async -> Page {
        Page(title: "Graph", main: "<h1>Module graph</h1>\(await graphSVG())")
    }

    /// One row per entitlement, with a form that grants or revokes it.
    func entitlementsForm() async -> String {
        let granted = await kernel.grantedEntitlements
        let rows = knownEntitlements(granted: granted).map { entitlement in
            let isGranted = granted.contains(entitlement)
            let name = HTML.escape(entitlement.rawValue)
            return "<tr data-entitlement=\"\(name)\"><td>\(name)</td><td>\(isGranted ? "granted" : "not granted")</td>"
                + "<td><form method=\"post\" action=\"/settings/entitlements\">"
                + "<input type=\"hidden\" name=\"csrf\" value=\"\(csrfToken)\">"
                + "<input type=\"hidden\" name=\"entitlement\" value=\"\(name)\">\(operatorKeyField)"
                + "<button name=\"action\" value=\"\(isGranted ? "revoke" : "grant")\">\(isGranted ? "Revoke" : "Grant")"
                + "</button></form></td></tr>"
        }
        return "<section class=\"panel\"><h2>Entitlements</h2><table><tbody>\(rows.joined())</tbody></table>"
            + "<p>Revoking one deactivates the modules that need it; granting brings them back.</p></section>"
    }

    /// A page for a request the host refuses: what was wrong, and how to fix it.
    func problemPage(status: Int, _ title: String, _ message: String) -> Page {
        Page(status: status, title: title, main: "<h1>\(HTML.escape(title))</h1><p>\(HTML.escape(message))</p>")
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Past a million seconds (only a manual clock gets there), whole seconds: the microseconds would overflow.
        guard abs(seconds) < 1_000_000 else { return "\(seconds) s" }
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        return "\(Double(microseconds) / 1000) ms"
    }

    /// `duration` for a reader, in its largest whole units: `3 d 4 h`, `5 min 2 s`, `42 s`.
    static func duration(_ duration: Duration) -> String {
        let seconds = max(0, duration.components.seconds)
        let parts = [
            (seconds / 86_400, "d"), (seconds / 3_600 % 24, "h"), (seconds / 60 % 60, "min"), (seconds % 60, "s"),
        ]
        .filter { $0.0 > 0 }
        return parts.isEmpty ? "0 s" : parts.prefix(2).map { "\($0.0) \($0.1)" }.joined(separator: " ")
    }
}
