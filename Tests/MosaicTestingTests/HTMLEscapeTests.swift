@_spi(Fuzzing) import MosaicHummingbird
import Testing

@Suite("HTML escaping")
struct HTMLEscapeTests {
    /// The escape as the spec states it, one Unicode scalar at a time: slow and obviously right.
    static func reference(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Scalars the random strings draw from: the five escaped characters, ASCII, combining marks (which merge with
    /// a preceding quote into one Character), and two-, three- and four-byte scalars.
    static let alphabet: [Unicode.Scalar] = [
        "&", "<", ">", "\"", "'", "a", "Z", "0", " ", "=", "/", ";", "#", "\u{301}", "\u{308}", "\u{20DD}", "é", "ß",
        "€", "中", "\u{FEFF}", "😀", "\u{1F3F3}", "\u{FE0F}", "\u{200D}", "\u{0}", "\n",
    ]

    @Test("escaping equals the one-scalar-at-a-time reference for random strings, multi-byte and combining marks too")
    func matchesReference() {
        var random = SeededRandom()
        print("HTML escaping property test:", random)
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...40, using: &random)
            var text = ""
            for _ in 0..<length {
                text.unicodeScalars.append(Self.alphabet.randomElement(using: &random)!)
            }
            let escaped = HTML.escape(text)
            #expect(escaped == Self.reference(text), "\(random): \(text.debugDescription)")
            #expect(!escaped.utf8.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "\"") })
        }
    }

    @Test("text with nothing to escape comes back as it is")
    func unchanged() {
        for text in ["", "plain", "é中😀\u{301}", String(repeating: "x", count: 10_000)] {
            #expect(HTML.escape(text) == text)
        }
    }
}
