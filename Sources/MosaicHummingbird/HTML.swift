internal import Mosaic

/// HTML text built only through escaping: every string a module or a request provides goes through ``escape(_:)``.
enum HTML {
    /// `text` safe inside element content and double-quoted attributes.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Where a module's link may point in the page: its own scheme's links become paths of this host, web links
    /// and paths of this host stay; anything else (`javascript:`, `data:`, scheme-relative `//host`, `/\host`…) is
    /// dropped.
    static func href(_ target: String, scheme: String) -> String {
        let prefix = "\(scheme)://"
        let lowered = target.lowercased()
        let path: Substring
        if lowered.hasPrefix(prefix) {
            path = Substring("/" + target.dropFirst(prefix.count))
        } else if lowered.hasPrefix("https://") || lowered.hasPrefix("http://") {
            return target
        } else {
            path = Substring(target)
        }
        // A second slash or a backslash after the first makes a browser read the rest as another host.
        guard path.hasPrefix("/"), !path.dropFirst().hasPrefix("/"), !path.dropFirst().hasPrefix("\\") else {
            return "#"
        }
        return String(path)
    }

    /// A panel's blocks as HTML.
    static func render(_ panel: Panel, scheme: String) -> String {
        panel.blocks.map { render($0, scheme: scheme) }.joined()
    }

    static func render(_ block: Block, scheme: String) -> String {
        switch block {
        case .heading(let text):
            return "<h3>\(escape(text))</h3>"
        case .text(let text):
            return "<p>\(escape(text))</p>"
        case .facts(let facts):
            let rows = facts.map { "<dt>\(escape($0.label))</dt><dd>\(escape($0.value))</dd>" }
            return "<dl>\(rows.joined())</dl>"
        case .list(let items):
            return "<ul>\(items.map { "<li>\(escape($0))</li>" }.joined())</ul>"
        case .link(let title, let target):
            return "<p><a href=\"\(escape(href(target, scheme: scheme)))\">\(escape(title))</a></p>"
        case .image(let source, let description):
            let safe = href(source, scheme: scheme)
            return safe == "#" ? "" : "<img src=\"\(escape(safe))\" alt=\"\(escape(description))\">"
        case .group(let blocks):
            return "<div class=\"group\">\(blocks.map { render($0, scheme: scheme) }.joined())</div>"
        }
    }
}
