import Mosaic
import Testing

private struct Hidden {}
private enum MySwift { struct Thing {} }
enum Outer { struct Inner<Element> {} }

@Suite("type names in messages")
struct TypeNameTests {
    @Test(
        "a service's name is its module-qualified type, without the standard library's Swift. or a private context",
        arguments: [
            (ServiceKey(Int.self).name, "Int"),
            (ServiceKey([String?].self).name, "Array<Optional<String>>"),
            (ServiceKey([String: [Int]].self).name, "Dictionary<String, Array<Int>>"),
            (ServiceKey(Result<Int, any Error>.self).name, "Result<Int, Error>"),
            (ServiceKey((Int, String).self).name, "(Int, String)"),
            (ServiceKey(Hidden.self).name, "MosaicTests.Hidden"),
            (ServiceKey([Hidden].self).name, "Array<MosaicTests.Hidden>"),
            (ServiceKey(MySwift.Thing.self).name, "MosaicTests.MySwift.Thing"),
            (ServiceKey(Outer.Inner<Swift.Double>.self).name, "MosaicTests.Outer.Inner<Double>"),
        ])
    func names(_ name: String, _ expected: String) {
        #expect(name == expected)
    }
}
