internal import Mosaic

/// HTML text built only through escaping: every string a module or a request provides goes through ``escape(_:)``.
@_spi(Fuzzing) public enum HTML {
    /// `text` safe inside element content and double-quoted attributes.
    ///
    /// Works on UTF-8 bytes, as a browser's tokenizer reads them: a `"` followed by a combining mark is one Swift
    /// `Character` that compares unequal to `"`, but it still ends an attribute. Text with nothing to escape is
    /// returned as it is.
    @_spi(Fuzzing) public static func escape(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: needsEscaping) else { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "&"): escaped += "&amp;".utf8
            case UInt8(ascii: "<"): escaped += "&lt;".utf8
            case UInt8(ascii: ">"): escaped += "&gt;".utf8
            case UInt8(ascii: "\""): escaped += "&quot;".utf8
            case UInt8(ascii: "'"): escaped += "&#39;".utf8
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }

    /// Where a module's link may point in the page: its own scheme's links become paths of this host, web links
    /// and paths of this host stay; anything else (`javascript:`, `data:`, scheme-relative `//host`, `/\host`…) is
    /// dropped.
    @_spi(Fuzzing) public static func href(_ target: String, scheme: String) -> String {
        // A browser drops tabs and newlines anywhere in a URL and trims controls and spaces, so `/\t/host` is
        // `//host`: a target with any of them is refused, not cleaned.
        guard !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return "#" }
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
