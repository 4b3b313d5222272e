import Foundation
import Mosaic
import Testing

@Suite struct ManifestTests {
    @Test("a manifest in JSON needs only id and version; everything else defaults")
    func minimalJSON() throws {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(#"{"id":"com.a.b","version":"1.0.0"}"#.utf8))
        #expect(manifest == Manifest(id: "com.a.b", version: "1.0.0"))
    }

    @Test("a full manifest round-trips through JSON")
    func roundTrip() throws {
        let manifest = Manifest(
            id: "com.ghost.weather", version: "1.4.0-beta.1",
            requires: [.module("com.ghost.location", "1.0.0"..<"2.0.0"), .module("com.ghost.maps", optional: true)],
            entitlements: ["weather"],
            compatibility: Compatibility(
                host: "2.0.0"..<"3.0.0", platforms: [PlatformRequirement(.linux, minimum: "5.0.0")],
                features: ["location"]))
        let decoded = try JSONDecoder().decode(Manifest.self, from: JSONEncoder().encode(manifest))
        #expect(decoded == manifest)
    }
}
