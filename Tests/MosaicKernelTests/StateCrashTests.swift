import Foundation
import Mosaic
import MosaicKernel
import Testing

extension StateKey where Value == String {
    static var crashTest: Self { StateKey("com.test.crash", initial: "", persistence: .jsonFile) }
    static var crashTestDatabase: Self { StateKey("com.test.crash", initial: "", persistence: .database) }
}

/// The `state-writer` executable built beside the tests.
func stateWriter() throws -> URL {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
    ].map { $0.appendingPathComponent("state-writer") }
    return try #require(
        candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
        "state-writer is built with the tests (swift build --build-tests); looked in \(candidates.map(\.path))")
}

@Suite(.timeLimit(.minutes(1))) struct StateCrashTests {
    @Test(
        "a process killed while writing a persisted key leaves the old or the new value, never a torn one",
        arguments: ["file", "database"])
    func killedDuringWrites(store: String) async throws {
        let directory = try temporaryDirectory()
        for _ in 0..<3 {
            let process = Process()
            process.executableURL = try stateWriter()
            process.arguments = [directory, store]
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
            let key: StateKey<String> = store == "file" ? .crashTest : .crashTestDatabase
            await kernel.sharedState.load(key)
            let value = kernel.sharedState[key]
            #expect(await kernel.diagnostics.isEmpty, "the saved file must always be readable")
            #expect(value.utf8.count == 2_000_000 && Set(value.utf8).count == 1, "one whole round, not a torn one")
        }
    }

    @Test("each write replaces the file rather than rewriting it in place, so no reader ever sees half a write")
    func replacedNotRewritten() async throws {
        let directory = try temporaryDirectory()
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await kernel.boot()
        let file = directory + "/com.test.crash.json"
        func inode() throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
        }
        try await kernel.sharedState.set(.crashTest, to: "first")
        let first = try inode()
        try await kernel.sharedState.set(.crashTest, to: "second")
        let second = try inode()
        #expect(first != nil && first != second)
        await kernel.shutdown()
    }
}
