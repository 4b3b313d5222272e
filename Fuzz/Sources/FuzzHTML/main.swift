import FuzzSupport
@_spi(Fuzzing) import MosaicHummingbird

/// Any text escaped for HTML: the result has no raw `<`, `>`, `"` or `'` byte, every `&` starts one of the five
/// entities, and unescaping gives the text back. Any text as a link target: what `href` keeps is a path of this
/// host, an http(s) URL, or `#`, never a scheme-relative or script target.
func fuzzHTML(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = FuzzSupport.text(bytes, count)
    let escaped = Array(HTML.escape(text).utf8)
    let entities = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].map { Array($0.utf8) }
    let raw: [UInt8] = ["&", "<", ">", "\"", "'"].map { UInt8(ascii: $0) }
    var unescaped: [UInt8] = []
    var index = 0
    while index < escaped.count {
        let byte = escaped[index]
        precondition(byte != UInt8(ascii: "<") && byte != UInt8(ascii: ">"), "raw < or > in \(escaped)")
        precondition(byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'"), "raw quote in \(escaped)")
        if byte == UInt8(ascii: "&") {
            guard let entity = entities.firstIndex(where: { escaped[index...].starts(with: $0) }) else {
                fatalError("a bare & in \(escaped)")
            }
            unescaped.append(raw[entity])
            index += entities[entity].count
        } else {
            unescaped.append(byte)
            index += 1
        }
    }
    precondition(unescaped.elementsEqual(text.utf8), "escaping lost or changed text")

    // As a browser reads it: tabs and newlines removed anywhere, controls and spaces trimmed.
    let href = String(
        HTML.href(text, scheme: "ghost").lowercased().unicodeScalars.filter { !["\t", "\n", "\r"].contains($0) }
    ).trimmingPrefix(while: { $0.asciiValue.map { $0 <= 0x20 } ?? false })
    let isPath = href.hasPrefix("/") && !href.hasPrefix("//") && !href.hasPrefix("/\\")
    precondition(href == "#" || isPath || href.hasPrefix("http://") || href.hasPrefix("https://"), "href \(href)")
    return 0
}

runFuzzer { fuzzHTML($0, $1) }
