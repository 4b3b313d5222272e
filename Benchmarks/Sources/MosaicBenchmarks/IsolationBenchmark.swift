// `MosaicBenchmarks isolation`: a route served by a module in a process of its own, against the same route in
// process and against the floor of its channel (the same bytes echoed over pipes by a bare child, `cat`), in one run;
// and the isolated module's resident memory. The child is this executable, serving `isolationCatalog`.
import Foundation
import Logging
import Mosaic
import MosaicKernel
import MosaicWeb

/// The module the isolation benchmark serves: one route that echoes its parameter in a 200-byte JSON body.
let isolationCatalog: ModuleCatalog = {
    var catalog = ModuleCatalog()
    catalog.add(
        ModuleFactory(
            manifest: Manifest(id: "com.bench.echo", version: "1.0.0"),
            register: { module in
                module.route(.get, "/echo/:word") { request in
                    let word = request.parameters["word"] ?? ""
                    return .json("{\"word\":\"\(word)\",\"padding\":\"\(String(repeating: "x", count: 160))\"}")
                }
            }
        ) { EchoModule() })
    return catalog
}()

private struct EchoModule: Module {
    static let manifest = Manifest(id: "com.bench.echo", version: "1.0.0")
}

func runIsolationBenchmark() async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let request = WebRequest(method: "GET", path: "/echo/hello", parameters: ["word": "hello"])
    let calls = 2_000

    func kernel(isolated: Bool) async throws -> (Kernel, WebRoute) {
        var options = KernelOptions()
        if isolated { options.isolation.modules = ["com.bench.echo"] }
        let kernel = Kernel(
            catalog: isolationCatalog, host: HostEnvironment(version: "1.0.0"),
            extensionPoints: [AnyExtensionPoint(.webRoutes)], options: options, logger: quiet)
        try await kernel.boot()
        guard let route = try await kernel.contributions(for: .webRoutes).first?.content() else {
            fatalError("the echo route is not served")
        }
        return (kernel, route)
    }

    let (inProcess, local) = try await kernel(isolated: false)
    let (isolated, remote) = try await kernel(isolated: true)
    guard let child = isolated.isolatedModules().first?.processIdentifier else { fatalError("no isolated process") }
    // The floor: the bytes of one call's frame and its reply's, echoed by `cat` over pipes, read back whole.
    let frameBytes = 4 + (try JSONEncoder().encode(request)).count + 60
    let replyBytes = 4 + (try JSONEncoder().encode(try await local.handle(request))).count + 40
    let floor = try EchoFloor(bytes: frameBytes + replyBytes)

    var rows: [(String, [Double])] = [("in process", []), ("isolated", []), ("floor: cat over pipes", [])]
    for _ in 0..<5 {
        rows[0].1.append(try await callsPerSecond(calls) { _ = try await local.handle(request) })
        rows[1].1.append(try await callsPerSecond(calls) { _ = try await remote.handle(request) })
        rows[2].1.append(try await callsPerSecond(calls) { try floor.roundTrip() })
    }
    print("A route's handler called one request at a time, \(calls) calls a round, 5 rounds (calls/s, median, range):")
    let widths = [24, 28]
    print(row(["", "calls/s"], widths: widths))
    for (name, values) in rows {
        let sorted = values.sorted()
        print(row([name, "\(Int(sorted[2])) (\(Int(sorted[0]))–\(Int(sorted[4])))"], widths: widths))
    }
    let median = rows.map { $0.1.sorted()[2] }
    let versusInProcess = format(median[1] / median[0], places: 3)
    print("isolated / in process: \(versusInProcess)×; isolated / floor: \(format(median[1] / median[2]))×")
    print("the isolated module's process: \(residentMegabytes(of: child))")
    floor.close()
    await inProcess.shutdown()
    await isolated.shutdown()
}

/// Calls of `body` per second over `count` calls.
private func callsPerSecond(_ count: Int, _ body: () async throws -> Void) async throws -> Double {
    let start = ContinuousClock.now
    for _ in 0..<count { try await body() }
    return Double(count) / (start.duration(to: .now).milliseconds / 1_000)
}

/// The resident memory of process `pid`, in megabytes: all of it (VmRSS), and its own (RssAnon, without the
/// executable's and libraries' pages, which the host's process shares).
private func residentMegabytes(of pid: Int32) -> String {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return "?" }
    func megabytes(_ field: String) -> String {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return "?" }
        return format(kilobytes / 1_024, places: 1)
    }
    return "\(megabytes("VmRSS")) MB resident, \(megabytes("RssAnon")) MB of it its own (RssAnon)"
}

/// A bare child (`cat`) that echoes what it is sent over pipes: the channel's own round trip, blocking reads on
/// this benchmark's thread and nothing else.
private final class EchoFloor {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let payload: Data

    init(bytes: Int) throws {
        payload = Data(repeating: UInt8(ascii: "x"), count: bytes)
        process.executableURL = URL(fileURLWithPath: "/bin/cat")
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func roundTrip() throws {
        try input.fileHandleForWriting.write(contentsOf: payload)
        var received = 0
        while received < payload.count {
            guard let data = try output.fileHandleForReading.read(upToCount: payload.count - received), !data.isEmpty
            else { throw CocoaError(.fileReadUnknown) }
            received += data.count
        }
    }

    func close() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
