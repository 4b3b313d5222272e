// A child process for the crash tests (`state-writer failing-services` runs the failure-isolation check instead; with
// MOSAIC_ISOLATED_MODULE set it serves an isolation fixture):
// writes a large state key over and over in the state directory named by its argument, printing each round's number
// just before its write, until it is killed.
import Foundation
import IsolationFixtures
import Logging
import Mosaic
import MosaicKernel

// Started by an isolation test's kernel to run one of the fixture modules.
if let status = await IsolatedModuleProcess.serveIfAsked(IsolationFixtures.catalog) { exit(status) }
if CommandLine.arguments.dropFirst().first == "failing-services" {
    await runFailingServices()
    exit(0)
}
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: state-writer STATE-DIRECTORY\n".utf8))
    exit(64)
}
/// 2 MB of one digit per round: big enough that a kill may land inside the write, and a torn write shows as a
/// short or mixed string, or as data that does not decode.
let key = StateKey("com.test.crash", initial: "", persistence: .database)
var quiet = Logger(label: "state-writer")
quiet.logLevel = .critical
let kernel = Kernel(
    catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"),
    options: KernelOptions(stateDirectory: CommandLine.arguments[1]), logger: quiet)
try await kernel.boot()
var round = 0
while true {
    round += 1
    // Unbuffered, so the test knows at once that a write is starting.
    FileHandle.standardOutput.write(Data("\(round)\n".utf8))
    try await kernel.sharedState.set(key, to: String(repeating: String(round % 10), count: 2_000_000))
}
