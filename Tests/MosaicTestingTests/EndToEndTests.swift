import Foundation
import GhostApp
import Logging
import MosaicHummingbird
import Testing

/// The real server on a free port, driven by headless Chromium through `Tests/EndToEnd/drive.py` (Selenium).
@Suite("End to end")
struct EndToEndTests {
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "in Chromium: dashboard order, a deeplink's tab, revoke and grant on Settings; a second window follows without a reload",
        .timeLimit(.minutes(3)),
        .enabled(if: OutsidePrograms.browser.shouldRun, OutsidePrograms.browser.skipReason))
    func chromium() async throws {
        guard OutsidePrograms.browser.requirePresent() else { return }
        let (_, web) = try await ghostWeb()
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let server = Task {
            try await WebServer.run(web, port: 0, logger: Logger(label: "e2e") { _ in SwiftLogNoOpLogHandler() }) {
                announce.yield($0)
            }
        }
        defer { server.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let output = Self.packageRoot.appending(path: "test-output/e2e")
        let driver = Process()
        driver.executableURL = URL(filePath: "/usr/bin/env")
        driver.arguments = [
            "python3", Self.packageRoot.appending(path: "Tests/EndToEnd/drive.py").path, "http://127.0.0.1:\(port)",
            output.path,
        ]
        let pipe = Pipe()
        driver.standardOutput = pipe
        driver.standardError = pipe
        try driver.run()
        let log = try await offThePool {
            defer { driver.waitUntilExit() }
            return String(decoding: try pipe.fileHandleForReading.readToEnd() ?? Data(), as: UTF8.self)
        }
        #expect(
            driver.terminationStatus == 0,
            "drive.py: \(log)\nNeeds chromium, chromium-driver and selenium; .ci/run installs them.")
        #expect(FileManager.default.fileExists(atPath: output.appending(path: "dashboard.png").path))
    }
}
