@_spi(Hosting) import Mosaic
import Testing

@Suite struct DeeplinkParserTests {
    @Test("a link parses into scheme, tab, feature, action, path and decoded query items, repeated keys kept")
    func parts() throws {
        let link = try Deeplink(
            parsing: "Ghost://dashboard/weather/city/extra/more?name=New%20York&tag=a&tag=b+c&flag#top")
        #expect(link.scheme == "ghost")
        #expect(link.tab == "dashboard")
        #expect(link.feature == "weather")
        #expect(link.action == "city")
        #expect(link.path == ["extra", "more"])
        #expect(link["name"] == "New York")
        #expect(link.values(of: "tag") == ["a", "b c"])
        #expect(link["flag"] == "")
        #expect(link["missing"] == nil)
    }

    @Test("the path form a web host receives parses like the full link")
    func pathForm() throws {
        let link = try Deeplink(parsingPath: "/dashboard/weather/city?name=Chicago", scheme: "ghost")
        #expect(link == (try Deeplink(parsing: "ghost://dashboard/weather/city?name=Chicago")))
    }

    @Test("a link built from parts prints as text that parses back to it")
    func roundTrip() throws {
        let link = Deeplink(
            scheme: "ghost", tab: "sports", feature: "team", action: "show", path: ["a/b", "ü"],
            query: [QueryItem("name", "Bulls & Bears"), QueryItem("q", "100% + more"), QueryItem("q", "")])
        #expect(try Deeplink(parsing: link.url) == link)
        #expect(link.url == "ghost://sports/team/show/a%2Fb/%C3%BC?name=Bulls%20%26%20Bears&q=100%25%20%2B%20more&q=")
    }

    @Test(
        "bad links are rejected with what is wrong and the fix",
        arguments: [
            ("", DeeplinkError.Code.empty, "The link is empty."),
            ("ghost://a b", .invalidCharacter, "The link has a space at byte 9."),
            ("ghost://tab\u{7}", .invalidCharacter, "The link has control character 0x7 at byte 11."),
            ("dashboard/weather", .missingScheme, "\"dashboard/weather\" has no scheme."),
            ("1ghost://tab", .invalidScheme, "\"1ghost\" is not a valid scheme."),
            ("http://tab", .schemeNotAllowed, "The scheme 'http' is not accepted here; this host accepts ghost."),
            ("ghost://", .missingTab, "ghost:// names no tab."),
            ("ghost://tab/%zz", .badPercentEncoding, "The link has a % at byte 12 not followed by two hex digits."),
            ("ghost://tab/a%2", .badPercentEncoding, "The link has a % at byte 13 not followed by two hex digits."),
            ("ghost://tab/%FF", .badPercentEncoding, "The escapes near byte 12 do not decode to UTF-8 text."),
            ("ghost://tab?x=%00", .invalidCharacter, "An escape near byte 14 decodes to a control character."),
        ])
    func rejections(text: String, code: DeeplinkError.Code, message: String) {
        let error = #expect(throws: DeeplinkError.self) {
            try Deeplink(parsing: text, rules: DeeplinkRules(allowedSchemes: ["ghost"]))
        }
        #expect(error?.code == code)
        #expect(error?.message == message)
        #expect(error?.fix.isEmpty == false)
    }

    @Test("a link over the length limit is rejected before it is read, however long")
    func tooLong() {
        let text = "ghost://tab/" + String(repeating: "a", count: 5_000_000)
        let error = #expect(throws: DeeplinkError.self) { try Deeplink(parsing: text) }
        #expect(error?.message == "The link is 5000012 bytes long; links are at most 2048.")
    }

    @Test(
        "a link's URL may outgrow the limit its text met, since raw characters are percent-encoded (found by fuzzing)")
    func urlLongerThanText() throws {
        let link = try Deeplink(parsing: "ghost://tab/" + String(repeating: "é", count: 500))
        #expect(link.url.utf8.count == 12 + 500 * 6)
        #expect(throws: DeeplinkError.self) { try Deeplink(parsing: link.url) }
        #expect(try Deeplink(parsing: link.url, rules: DeeplinkRules(maximumLength: 4_096)) == link)
    }

    @Test("100,000 random and mutated strings: each parses and round-trips, or is rejected with a reason and a fix")
    func fuzz() {
        var random = SeededRandom()
        let seeds = [
            "ghost://dashboard/weather/city?name=Chicago", "ghost://sports/team?name=Bulls&x=%20", "ghost://a/b/c/d/e",
        ]
        let alphabet = Array("abcXYZ019/?&=%#+:.-_~ \u{0}\u{7F}é漢🙂%2%G%FF%C3%BC".unicodeScalars)
        var parsed = 0
        for round in 0..<100_000 {
            var scalars = Array(seeds[round % seeds.count].unicodeScalars)
            if round % 4 == 0 {
                scalars = (0..<Int.random(in: 0..<40, using: &random)).map { _ in
                    alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                }
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let position = Int.random(in: 0...scalars.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: scalars.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &random)], at: position)
                    case 1 where position < scalars.count: scalars.remove(at: position)
                    default:
                        if position < scalars.count {
                            scalars[position] = alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                        }
                    }
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            do {
                let link = try Deeplink(parsing: text)
                parsed += 1
                #expect(try Deeplink(parsing: link.url) == link, "\(text) → \(link.url); \(random)")
            } catch {
                #expect(!error.message.isEmpty && !error.fix.isEmpty, "\(text); \(random)")
            }
        }
        #expect(parsed > 10_000, "the mutations should leave many links valid; \(random)")
    }
}
