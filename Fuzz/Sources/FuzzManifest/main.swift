import Foundation
import FuzzSupport
import Mosaic
import MosaicKernel

/// A module the fuzzed manifests can name.
struct FuzzModule: Module {
    static let manifest = Manifest(
        id: "com.fuzz.weather", version: "1.4.0", requires: [.module("com.fuzz.location", "1.0.0"..<"2.0.0")],
        entitlements: ["weather"])
}

/// The file each input is written to: the catalog reads manifests from files, as a host does.
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-fuzz-\(getpid()).json").path

/// Any bytes as a manifest file: read into a module or into diagnostics, which are bounded in size, and the
/// module graph validated. A trap, or a diagnostic that grows with the input, is a finding.
func fuzzManifest(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let contents = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    guard FileManager.default.createFile(atPath: scratch, contents: contents) else {
        fatalError("cannot write \(scratch)")
    }
    var catalog = ModuleCatalog()
    catalog.readManifest(at: scratch, entryPoints: ["WeatherModule": ModuleFactory(FuzzModule.self)])
    let diagnostics = Kernel.validate(catalog, host: HostEnvironment(version: "2.3.0"), entitlements: .granted([]))
    for diagnostic in catalog.diagnostics + diagnostics {
        let size = diagnostic.description.utf8.count
        precondition(size < 16_384, "a diagnostic of \(size) bytes")
    }
    return 0
}

runFuzzer { fuzzManifest($0, $1) }
