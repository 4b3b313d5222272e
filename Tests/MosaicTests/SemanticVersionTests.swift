import Mosaic
import Testing

@Suite struct SemanticVersionTests {
    @Test(
        "strict semver texts are valid",
        arguments: [
            "0.0.0", "1.4.0", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92",
            "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85", "1.0.0-x-y-z.--",
            // Rejected by the parser before ours: a '-' in build metadata without a pre-release.
            "1.0.0+build-1", "1.0.0+21AF26D3----117B344092BD", "9223372036854775807.0.0", "1.0.0-99999999999999999999",
        ])
    func valid(_ text: String) {
        #expect(SemanticVersion(text).isValid)
        #expect(SemanticVersion(text).text == text)
    }

    @Test(
        "anything else is invalid, and the problem says how to write a version",
        arguments: [
            "", "1", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "v1.2.3", "-1.2.3", "1.2.3-", "1.2.3-01",
            "1.2.3-a..b", "1.2.3+", "1.2.3-al@pha", " 1.2.3", "1.2.3 ", "+1.2.3", "1.2.+3", "a.b.c",
            // Trapped inside the parser before ours ("Range requires lowerBound <= upperBound").
            "1.0.+0-x", "1.0.+0", "1.+0.0-x", "+0.0.0-", "1.0.0-+", "1.0.0+x+y",
            // Numbers past Int.max.
            "9223372036854775808.0.0", "1.99999999999999999999.0",
        ])
    func invalid(_ text: String) {
        let version = SemanticVersion(text)
        #expect(!version.isValid)
        #expect(version.problem?.contains("MAJOR.MINOR.PATCH") == true)
    }

    @Test("precedence follows the semver specification, pre-releases included")
    func ordering() {
        let ascending: [SemanticVersion] = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0",
        ]
        for (lower, higher) in zip(ascending, ascending.dropFirst()) {
            #expect(lower < higher, "\(lower) < \(higher)")
            #expect(!(higher < lower))
        }
        var random = SeededRandom()
        #expect(ascending.shuffled(using: &random).sorted() == ascending, "\(random)")
    }

    @Test("build metadata does not change precedence or equality")
    func buildMetadata() {
        #expect(SemanticVersion("1.0.0+build.1") == SemanticVersion("1.0.0+build.2"))
        #expect(Set<SemanticVersion>(["1.0.0+a", "1.0.0"]).count == 1)
    }

    @Test("invalid versions sort before valid ones")
    func invalidSortsFirst() {
        #expect(SemanticVersion("banana") < SemanticVersion("0.0.0"))
    }

    @Test("numeric pre-release identifiers compare by value at any size, below alphanumeric ones")
    func numericIdentifiers() {
        #expect(SemanticVersion("1.0.0-2") < SemanticVersion("1.0.0-10"))
        #expect(SemanticVersion("1.0.0-9223372036854775807") < SemanticVersion("1.0.0-99999999999999999999"))
        #expect(SemanticVersion("1.0.0-99999999999999999999") < SemanticVersion("1.0.0-alpha"))
        #expect(SemanticVersion("1.0.0--1") > SemanticVersion("1.0.0-1"), "'-1' is alphanumeric, not minus one")
    }

    @Test("a huge text is refused with a bounded problem that states its length")
    func hugeText() {
        let version = SemanticVersion(String(repeating: "1", count: 1_000_000))
        #expect(!version.isValid)
        #expect((version.problem?.utf8.count ?? .max) < 500)
        #expect(version.problem?.contains("(1000000 bytes)") == true)
        #expect(version.description.utf8.count < 120)
    }

    @Test(
        "a version's parts read back as written, identifiers and all",
        arguments: [
            ("2.0.0-beta.2+exp.sha.5114f85", 2, 0, 0, ["beta", "2"], ["exp", "sha", "5114f85"]),
            ("1.4.0+build.7", 1, 4, 0, [], ["build", "7"]),
            ("0.0.9-rc.1", 0, 0, 9, ["rc", "1"], []),
            ("10.20.30", 10, 20, 30, [], []),
        ] as [(String, Int, Int, Int, [String], [String])])
    func parts(_ text: String, major: Int, minor: Int, patch: Int, prerelease: [String], build: [String]) throws {
        let version = SemanticVersion(text)
        let parts = try #require(version.components)
        #expect([parts.major, parts.minor, parts.patch] == [major, minor, patch])
        #expect(parts.prerelease == prerelease)
        #expect(parts.build == build)
        #expect(version.isPrerelease == !prerelease.isEmpty)
        #expect(SemanticVersion("1.4").components == nil)
    }

    @Test("the next major of Int.max does not exist, and does not overflow")
    func nextMajorOverflow() {
        #expect(SemanticVersion("9223372036854775807.0.0").nextMajor == nil)
        #expect(SemanticVersion("1.2.3").nextMajor == "2.0.0")
    }
}
