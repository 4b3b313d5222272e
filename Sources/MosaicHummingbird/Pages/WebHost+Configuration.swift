internal import Mosaic
internal import MosaicKernel

extension WebHost {
    /// The Modules page's configuration table: every module's keys with their values, secrets redacted, and
    /// whether the host supplied each or it is the default.
    func configurationSection(_ modules: [ModuleID]) async -> String {
        var rows = ""
        for id in modules {
            for entry in await kernel.configuration(of: id) {
                let value = entry.isSecret ? "•••••• (secret)" : HTML.escape(entry.value)
                rows +=
                    "<tr data-config-key=\"\(HTML.escape(entry.key))\"><td>\(HTML.escape(id.rawValue))</td>"
                    + "<td>\(HTML.escape(entry.key))</td><td>\(value)</td>"
                    + "<td>\(entry.isSupplied ? "set by the host" : "default")</td></tr>"
            }
        }
        guard !rows.isEmpty else { return "" }
        return "<h2>Configuration</h2><table><thead><tr><th>Module</th><th>Key</th><th>Value</th><th>Source</th>"
            + "</tr></thead><tbody>\(rows)</tbody></table>"
    }
}

extension WebHost {
    /// Each lifecycle phase a module's participants took part in, with the time they took: `launched 0.2 ms`.
    static func phaseTimes(_ times: [LifecyclePhase: Duration]) -> String {
        times.sorted { $0.key.name < $1.key.name }.map { "\($0.key.name) \(milliseconds($0.value))" }
            .joined(separator: ", ")
    }
}
