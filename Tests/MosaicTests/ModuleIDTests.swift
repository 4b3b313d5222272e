import Mosaic
import Testing

@Suite struct ModuleIDTests {
    @Test(
        "reverse-DNS identifiers of lowercase segments are valid",
        arguments: [
            "com.ghost.weather", "io.example", "org.a1.b-2.c", "com.x" + String(repeating: "y", count: 62),
        ])
    func validIdentifiers(_ text: String) {
        #expect(ModuleID(text).problems == [])
    }

    @Test(
        "each broken rule is named with its fix",
        arguments: [
            ("", "empty"),
            ("weather", "at least two segments"),
            ("com..weather", "segment 2 is empty"),
            ("com.Ghost", "use only a-z, 0-9 and '-'"),
            ("com.ghost.wea ther", "U+20"),
            ("com.1ghost", "must start with a lowercase letter"),
            ("com.ghost-", "must not end with '-'"),
            ("com." + String(repeating: "a", count: 64), "longer than 63"),
            (String(repeating: "abcdefgh.", count: 30) + "z", "shorten it to at most 255"),
        ])
    func invalidIdentifiers(_ text: String, _ expected: String) {
        let problems = ModuleID(text).problems
        #expect(problems.contains { $0.contains(expected) }, "\(problems)")
    }

    @Test("every problem of one identifier is reported, not just the first")
    func allProblems() {
        let problems = ModuleID("Com..x-").problems
        #expect(problems.count >= 3, "\(problems)")
    }

    @Test("any string, however odd, is judged without crashing")
    func arbitraryStrings() {
        var generator = SeededRandom()
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...300, using: &generator)
            let scalars = (0..<length).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x2FFF, using: &generator))
            }
            let text = String(String.UnicodeScalarView(scalars))
            let id = ModuleID(text)
            #expect(id.isValid == id.problems.isEmpty, "\(generator)")
        }
    }
}

@Suite struct ModuleIDFastCheckTests {
    /// The written rules, spelled out independently of the implementation.
    private func followsRules(_ text: String) -> Bool {
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.count <= 255 && segments.count >= 2
            && segments.allSatisfy { segment in
                (1...63).contains(segment.count)
                    && segment.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
                    && segment.first.map { ("a"..."z").contains($0) } == true && segment.last != "-"
            }
    }

    @Test("the one-pass check agrees with the written rules on 20,000 near-miss identifiers")
    func agreesWithRules() {
        let alphabet = Array("ab-z09.A_ é")
        var random = SeededRandom()
        for _ in 0..<20_000 {
            let text = String(
                (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let id = ModuleID(text)
            #expect(id.isValid == followsRules(text), "'\(text)'; \(random)")
            #expect(id.isValid == id.problems.isEmpty, "'\(text)': \(id.problems); \(random)")
        }
    }

    @Test("identifiers made from equal text in different ways are equal and hash alike; different text is not equal")
    func equalityAndHashing() {
        let literal: ModuleID = "com.ghost.weather"
        let built = ModuleID(["com", "ghost", "weather"].joined(separator: "."))
        let sliced = ModuleID(String("xcom.ghost.weatherx".dropFirst().dropLast()))
        #expect(literal == built && built == sliced)
        #expect(Set([literal, built, sliced]).count == 1)
        #expect([literal: 1][sliced] == 1)
        #expect(literal != ModuleID("com.ghost.weathex") && literal != ModuleID("Com.ghost.weather"))
        #expect(ModuleID("com.Ghost") != ModuleID("com.ghost") && !ModuleID("com.Ghost").isValid)
        // An identifier fits an existential's inline buffer, so a `ServiceContext` carries one without a box.
        #expect(MemoryLayout<ModuleID>.size <= 3 * MemoryLayout<Int>.size)
    }
}
