import Foundation
import IsolationFixtures
import Mosaic
import MosaicKernel
import Testing

extension StateKey where Value == String {
    static var crashTest: Self { StateKey("com.test.crash", initial: "", persistence: .database) }
}

/// The `state-writer` executable built beside the tests.
func stateWriter() throws -> URL {
    let path = try #require(
        IsolationFixtures.server(), "state-writer is built with the tests (swift build --build-tests)")
    return URL(fileURLWithPath: path)
}

@Suite(.timeLimit(.minutes(1))) struct StateCrashTests {
    @Test("a process killed while writing a persisted key leaves the old or the new value, never a torn one")
    func killedDuringWrites() async throws {
        let directory = try temporaryDirectory()
        for _ in 0..<3 {
            let process = Process()
            process.executableURL = try stateWriter()
            process.arguments = [directory]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // Let a few writes complete, then kill the writer as soon as it says it starts another.
            let lines = try await offThePool {
                var lines = 0
                while lines < 3 {
                    let data = output.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    lines += data.count { $0 == UInt8(ascii: "\n") }
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return lines
            }
            #expect(lines >= 3, "the writer should have started writing before it was killed")

            let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
            try await kernel.boot()
            await kernel.sharedState.load(.crashTest)
            let value = kernel.sharedState[.crashTest]
            #expect(await kernel.diagnostics.isEmpty, "the saved file must always be readable")
            #expect(value.utf8.count == 2_000_000 && Set(value.utf8).count == 1, "one whole round, not a torn one")
            await kernel.shutdown()
        }
    }

    @Test("a key an earlier release kept in a JSON file is read into the state database once, and the file kept aside")
    func legacyFileImported() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/com.test.crash.json"
        try Data("\"from a file\"".utf8).write(to: URL(fileURLWithPath: file))
        for _ in 0..<2 {
            let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
            try await kernel.boot()
            await kernel.sharedState.load(.crashTest)
            #expect(kernel.sharedState[.crashTest] == "from a file")
            #expect(await kernel.diagnostics.isEmpty)
            await kernel.shutdown()
        }
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(FileManager.default.fileExists(atPath: file + ".imported"))
    }
}
