// swift-format-ignore-file: NeverForceUnwrap
// Swinject's `resolve` returns an optional; these benchmarks unwrap it as its users do.

import Dependencies
import Foundation
import Logging
import Mosaic
import MosaicKernel
import Swinject

// 1,000 distinct service types: Pair<X, Y> over 32 × 32 empty types (the first 1,000 pairs).
enum T0 {}
enum T1 {}
enum T2 {}
enum T3 {}
enum T4 {}
enum T5 {}
enum T6 {}
enum T7 {}
enum T8 {}
enum T9 {}
enum T10 {}
enum T11 {}
enum T12 {}
enum T13 {}
enum T14 {}
enum T15 {}
enum T16 {}
enum T17 {}
enum T18 {}
enum T19 {}
enum T20 {}
enum T21 {}
enum T22 {}
enum T23 {}
enum T24 {}
enum T25 {}
enum T26 {}
enum T27 {}
enum T28 {}
enum T29 {}
enum T30 {}
enum T31 {}

let baseTypes: [any Any.Type] = [
    T0.self, T1.self, T2.self, T3.self, T4.self, T5.self, T6.self, T7.self, T8.self, T9.self, T10.self, T11.self,
    T12.self, T13.self, T14.self, T15.self, T16.self, T17.self, T18.self, T19.self, T20.self, T21.self, T22.self,
    T23.self, T24.self, T25.self, T26.self, T27.self, T28.self, T29.self, T30.self, T31.self,
]

/// The 1,000 (X, Y) pairs.
let pairs: [(any Any.Type, any Any.Type)] = Array(baseTypes.flatMap { x in baseTypes.map { (x, $0) } }.prefix(1_000))

struct Pair<X, Y>: Sendable {}
struct PairKey<X, Y>: DependencyKey {
    static var liveValue: Pair<X, Y> { Pair() }
}

private func addMosaic<X, Y>(_: X.Type, _: Y.Type, to registrar: inout ServiceRegistrar) {
    registrar.singleton(ServiceKey(Pair<X, Y>.self)) { Pair<X, Y>() }
}

private func resolveMosaic<X, Y>(_: X.Type, _: Y.Type, from services: Services) throws {
    consume(try services.resolve(ServiceKey(Pair<X, Y>.self)))
}

private func addSwinject<X, Y>(_: X.Type, _: Y.Type, to container: Container) {
    container.register(Pair<X, Y>.self) { _ in Pair<X, Y>() }.inObjectScope(.container)
}

private func resolveSwinject<X, Y>(_: X.Type, _: Y.Type, from container: Container) {
    consume(container.resolve(Pair<X, Y>.self)!)
}

private func resolveDependency<X, Y>(_: X.Type, _: Y.Type) {
    consume(Dependency(PairKey<X, Y>.self).wrappedValue)
}

/// The floor: a hand-written container, factories and singletons in dictionaries by type, over the same types;
/// no validation, no modules, no thread safety. What it costs is mostly the harness's own work (opening the types,
/// the runtime's lookups of each `Pair<X, Y>`), which every contender pays too.
final class DictionaryContainer {
    var factories: [ObjectIdentifier: () -> Any] = [:]
    var instances: [ObjectIdentifier: Any] = [:]
}

private func addDictionary<X, Y>(_: X.Type, _: Y.Type, to container: DictionaryContainer) {
    container.factories[ObjectIdentifier(Pair<X, Y>.self)] = { Pair<X, Y>() }
}

private func resolveDictionary<X, Y>(_: X.Type, _: Y.Type, from container: DictionaryContainer) {
    let id = ObjectIdentifier(Pair<X, Y>.self)
    if let instance = container.instances[id] { return consume(instance as! Pair<X, Y>) }
    let instance = container.factories[id]!() as! Pair<X, Y>
    container.instances[id] = instance
    consume(instance)
}

/// Registers and resolves the 1,000 services once with `contender`; returns how long that took.
func registerAndResolveMany(_ contender: String) async throws -> Duration {
    let start = ContinuousClock.now
    switch contender {
    case "mosaic":
        let module = ModuleFactory(
            manifest: Manifest(id: "bench.many", version: "1.0.0"),
            register: { module in for (x, y) in pairs { addMosaic(x, y, to: &module.services) } },
            make: { NoOpModule() })
        var quiet = Logger(label: "bench")
        quiet.logLevel = .critical
        var catalog = ModuleCatalog()
        catalog.add(module)
        let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quiet)
        try await kernel.boot()
        let services = await kernel.services
        for (x, y) in pairs { try resolveMosaic(x, y, from: services) }
    case "swinject":
        let container = Container()
        for (x, y) in pairs { addSwinject(x, y, to: container) }
        for (x, y) in pairs { resolveSwinject(x, y, from: container) }
    case "dictionary":
        let container = DictionaryContainer()
        for (x, y) in pairs { addDictionary(x, y, to: container) }
        for (x, y) in pairs { resolveDictionary(x, y, from: container) }
    default:
        for (x, y) in pairs { resolveDependency(x, y) }
    }
    return start.duration(to: .now)
}

/// Warm: repeated in this process. Cold: the first time, in a new process each run.
func runManyServicesBenchmark() async throws {
    print("\n1,000 distinct services, register + resolve each once (ms, median)\n")
    let widths = [22, 10, 10]
    print(row(["contender", "warm", "cold"], widths: widths))
    let names = [
        "mosaic": "Mosaic", "dependencies": "swift-dependencies", "swinject": "Swinject",
        "dictionary": "dictionary (floor)",
    ]
    for contender in ["mosaic", "dependencies", "swinject", "dictionary"] {
        var warm: [Double] = []
        for _ in 0..<9 { warm.append(try await registerAndResolveMany(contender).milliseconds) }
        var cold: [Double] = []
        for _ in 0..<5 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["cold", contender]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            process.waitUntilExit()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if let value = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) { cold.append(value) }
        }
        print(
            row(
                [
                    names[contender] ?? contender, format(warm.sorted()[warm.count / 2], places: 3),
                    cold.isEmpty ? "?" : format(cold.sorted()[cold.count / 2], places: 3),
                ], widths: widths))
    }
    print("(goals for Mosaic: warm ≤ 1 ms, cold ≤ 2 ms, and ahead of both peers in each)")
}
