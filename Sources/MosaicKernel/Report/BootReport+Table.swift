internal import Mosaic

extension BootReport {
    /// The report as a fixed-width table, one row per module, then the diagnostics and the summary.
    ///
    /// ```
    /// MODULE             VERSION  STATE    TIME     REASON
    /// com.ghost.weather  1.4.0    active   0.4 ms
    /// com.ghost.sports   1.0.0    blocked           it needs the entitlement 'sports', not granted.
    /// com.ghost.art      0.9.0    standby           starts on: the content of art.daily in mosaic.dashboard-widgets
    /// ```
    public var table: String {
        let header = ["MODULE", "VERSION", "STATE", "TIME", "REASON"]
        let rows = modules.map { module in
            [
                module.id.rawValue, module.version.text, module.state.name,
                module.activationTime.map(Self.format) ?? "",
                [module.explanation, module.processSummary].filter { !$0.isEmpty }.joined(separator: " · "),
            ]
        }
        let widths = (0..<header.count - 1).map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }
            return (padded + [cells[cells.count - 1]]).joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [line(header)] + rows.map(line)
        let problems = diagnostics.filter { $0.severity > .note }
        if !problems.isEmpty {
            lines.append("")
            lines += problems.map(\.description)
        }
        lines.append("")
        lines.append(summary)
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
