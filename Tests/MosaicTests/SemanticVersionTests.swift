import Mosaic
import Testing

@Suite struct SemanticVersionTests {
    @Test(
        "strict semver texts are valid",
        arguments: [
            "0.0.0", "1.4.0", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92",
            "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85", "1.0.0-x-y-z.--",
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
        #expect(ascending.shuffled().sorted() == ascending)
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
}
