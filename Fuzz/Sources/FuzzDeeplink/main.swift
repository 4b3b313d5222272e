import FuzzSupport
@_spi(Hosting) import Mosaic

/// Any bytes as a link, with default and strict rules and as a web path: a link parses and its URL parses back to
/// the same link, or it is refused with a message and a fix. Anything else, or a trap, is a finding.
func fuzzDeeplink(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = FuzzSupport.text(bytes, count)
    for rules in [DeeplinkRules(), DeeplinkRules(allowedSchemes: ["ghost"], maximumLength: 64)] {
        do {
            let link = try Deeplink(parsing: text, rules: rules)
            // A link's URL percent-encodes what the text had raw, so it may be longer than the limit the text met.
            let unlimited = DeeplinkRules(maximumLength: .max)
            guard (try? Deeplink(parsing: link.url, rules: unlimited)) == link else {
                fatalError("\(text) → \(link.url) does not parse back to the same link")
            }
        } catch {
            precondition(!error.message.isEmpty && !error.fix.isEmpty, "a refusal without a message or fix")
        }
    }
    _ = try? Deeplink(parsingPath: text, scheme: "ghost")
    return 0
}

runFuzzer { fuzzDeeplink($0, $1) }
