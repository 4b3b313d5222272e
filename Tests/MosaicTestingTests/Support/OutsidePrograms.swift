import Foundation
import Testing

/// Programs from outside the Swift toolchain that some tests drive: a test that needs them runs when they are
/// present and is skipped, with the reason and the install command, when they are not; CI sets
/// `MOSAIC_REQUIRE_OUTSIDE_PROGRAMS=1`, which makes their absence a failure instead.
struct OutsidePrograms: Sendable {
    /// What is needed, for messages.
    let name: String
    /// The command that installs them on Debian.
    let install: String
    /// The parts that are missing here; empty when everything is present.
    let missing: [String]

    /// Chromium, its driver and Selenium, for the end-to-end browser test.
    static let browser = OutsidePrograms(
        name: "Chromium, chromium-driver and Selenium",
        install: "apt-get install chromium chromium-driver && python3 -m pip install selenium",
        missing: missingExecutables(["chromium", "chromedriver", "python3"]) + missingPythonModules(["selenium"]))

    /// Graphviz's `dot`, to check that the DOT the `graph` command prints is valid Graphviz.
    static let graphviz = OutsidePrograms(
        name: "Graphviz (dot)", install: "apt-get install graphviz", missing: missingExecutables(["dot"]))

    /// Whether CI demands every outside program.
    static let required = ProcessInfo.processInfo.environment["MOSAIC_REQUIRE_OUTSIDE_PROGRAMS"] == "1"

    /// Whether a test that needs these runs: when they are present, or when CI requires them (and the test fails).
    var shouldRun: Bool { missing.isEmpty || Self.required }

    /// Why a test that needs these was skipped.
    var skipReason: Comment {
        "skipped: \(missing.joined(separator: ", ")) not found; install with `\(install)` (.ci/run does)"
    }

    /// Records a failure when the programs are missing although CI requires them; call first in the test.
    func requirePresent() -> Bool {
        guard !missing.isEmpty else { return true }
        let problem = "\(name): required here (MOSAIC_REQUIRE_OUTSIDE_PROGRAMS=1), but \(missing) not found"
        Issue.record("\(problem); install with `\(install)`")
        return false
    }

    private static func missingExecutables(_ names: [String]) -> [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init)
        return names.filter { name in
            !directories.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
        }
    }

    /// Python modules that cannot be imported; all of them when there is no `python3` to ask.
    private static func missingPythonModules(_ names: [String]) -> [String] {
        guard missingExecutables(["python3"]).isEmpty else { return names.map { "python3 module \($0)" } }
        return names.filter { name in
            let process = Process()
            process.executableURL = URL(filePath: "/usr/bin/env")
            process.arguments = ["python3", "-c", "import \(name)"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return true }
            process.waitUntilExit()
            return process.terminationStatus != 0
        }.map { "python3 module \($0)" }
    }
}
