import Mosaic
import Testing

@Suite struct VersionRangeTests {
    @Test("half-open, closed, from and at-least ranges accept what they say")
    func containment() {
        let halfOpen = ("1.0.0"..<"2.0.0" as VersionRange)
        #expect(halfOpen.contains("1.0.0") && halfOpen.contains("1.9.9"))
        #expect(!halfOpen.contains("2.0.0") && !halfOpen.contains("0.9.9"))
        let closed = ("1.0.0"..."1.4.0" as VersionRange)
        #expect(closed.contains("1.4.0") && !closed.contains("1.4.1"))
        let from = VersionRange.from("1.2.0")
        #expect(from.contains("1.2.0") && from.contains("1.99.0") && !from.contains("2.0.0") && !from.contains("1.1.0"))
        let atLeast = VersionRange.atLeast("3.0.0")
        #expect(atLeast.contains("30.0.0") && !atLeast.contains("2.9.9"))
        #expect(VersionRange.any.contains("0.0.1"))
    }

    @Test("a release against release bounds is in range exactly when the versions' order says so (seeded, 5,000 pairs)")
    func releasesFollowTheOrder() {
        let seed = UInt64.random(in: 1...UInt64.max)
        print("VersionRangeTests.releasesFollowTheOrder seed \(seed)")
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func version() -> SemanticVersion {
            SemanticVersion("\(next(3)).\(next(3)).\(next(3))" + (next(4) == 0 ? "+build.\(next(9))" : ""))
        }
        for _ in 0..<5_000 {
            let (lower, upper, candidate) = (version(), version(), version())
            let range: VersionRange
            let expected: Bool
            switch next(5) {
            case 0:
                guard lower < upper else { continue }
                range = lower..<upper
                expected = !(candidate < lower) && candidate < upper
            case 1:
                guard lower <= upper else { continue }
                range = lower...upper
                expected = !(candidate < lower) && !(upper < candidate)
            case 2:
                range = .atLeast(lower)
                expected = !(candidate < lower)
            case 3:
                range = .from(lower)
                expected = !(candidate < lower) && candidate.components!.major == lower.components!.major
            default:
                range = .any
                expected = true
            }
            #expect(range.contains(candidate) == expected, "\(candidate) in \(range), seed \(seed)")
        }
    }

    @Test("pre-releases match only ranges whose bounds are pre-releases")
    func prereleases() {
        #expect(!("1.0.0"..<"2.0.0" as VersionRange).contains("1.5.0-beta"))
        #expect(!VersionRange.any.contains("1.5.0-beta"))
        #expect(("1.5.0-alpha"..<"2.0.0" as VersionRange).contains("1.5.0-beta"))
        #expect(VersionRange.atLeast("2.0.0-rc.1").contains("2.0.0-rc.2"))
    }

    @Test("an invalid version is never in range")
    func invalidNeverContained() {
        #expect(!VersionRange.any.contains("1.0"))
        #expect(!VersionRange(parsing: "1.0..<2.0.0")!.contains("1.5.0"))
    }

    @Test(
        "manifest text forms parse and print back",
        arguments: [
            ("1.0.0..<2.0.0", "1.0.0..<2.0.0"), ("1.0.0...1.9.0", "1.0.0...1.9.0"), ("^1.2.0", "1.2.0..<2.0.0"),
            (">=1.2.0", ">=1.2.0"), ("*", "*"), (" 1.0.0 ..< 2.0.0 ", "1.0.0..<2.0.0"),
        ])
    func parsing(_ text: String, _ printed: String) {
        #expect(VersionRange(parsing: text)?.description == printed)
        #expect(VersionRange(parsing: text)?.problem == nil)
    }

    @Test("malformed ranges explain themselves")
    func problems() {
        #expect(VersionRange(parsing: "about two") == nil)
        #expect(VersionRange(parsing: "2.0.0..<1.0.0")?.problem?.contains("empty") == true)
        #expect(VersionRange(parsing: "1.0..<2.0.0")?.problem?.contains("not a semantic version") == true)
    }

    @Test(
        "ranges from outside never trap; a caret on the largest major is every later version",
        arguments: ["^9223372036854775807.0.0", "1.0.+0-x..<2.0.0", "^1.0.+0-x", ">=1.0.+0-x", "1.0.0...1.0.+0-x"])
    func hostileRanges(_ text: String) throws {
        let range = try #require(VersionRange(parsing: text))
        if text.hasPrefix("^9") {
            #expect(range.problem == nil)
            #expect(range.contains("9223372036854775807.0.0") && range.contains("9223372036854775807.5.0"))
            #expect(!range.contains("9223372036854775806.0.0"))
        } else {
            #expect(range.problem?.contains("'1.0.+0-x' is not a semantic version") == true)
            #expect(!range.contains("1.0.0"))
        }
    }

    @Test("a pre-release of a release upper bound's own version is outside a half-open range")
    func prereleaseOfUpperBound() {
        #expect(!("1.0.0-rc.1"..<"2.0.0" as VersionRange).contains("2.0.0-alpha"))
        #expect(("1.0.0-rc.1"..<"2.0.0" as VersionRange).contains("1.0.0-rc.2"))
        #expect(("1.0.0"..."2.0.0-beta" as VersionRange).contains("2.0.0-alpha"))
    }
}
