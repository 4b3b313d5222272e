// swift-format-ignore-file: NeverForceUnwrap
// Swinject's `resolve` returns an optional; these benchmarks unwrap it as its users do.

import BlackHole
import Dependencies
import Foundation
import Logging
import Mosaic
import MosaicKernel
import Swinject
import Synchronization

// The services every contender builds: three leaves and a root that takes one of each.
protocol LeafA: Sendable { var value: Int { get } }
protocol LeafB: Sendable { var value: Int { get } }
protocol LeafC: Sendable { var value: Int { get } }

extension ServiceKey where Value == any LeafA {
    static var leafA: Self { Self() }
}

extension ServiceKey where Value == any LeafB {
    static var leafB: Self { Self() }
}

extension ServiceKey where Value == any LeafC {
    static var leafC: Self { Self() }
}
final class A: LeafA { let value = 1 }
final class B: LeafB { let value = 2 }
final class C: LeafC { let value = 3 }
final class Root: Sendable {
    let a: any LeafA
    let b: any LeafB
    let c: any LeafC
    init(a: any LeafA, b: any LeafB, c: any LeafC) {
        self.a = a
        self.b = b
        self.c = c
    }
}
protocol Shared: Sendable { var value: Int { get } }

extension ServiceKey where Value == any Shared {
    static var shared: Self { Self() }
}
final class SharedImpl: Shared { let value = 7 }

/// Keeps the optimizer from deleting the work being measured.
@inline(__always) func consume<T>(_ value: T) { blackHole(value) }

// swift-dependencies: keys for the same shapes.
struct SharedKey: DependencyKey { static let liveValue: any Shared = SharedImpl() }
struct LeafFactory: Sendable { var make: @Sendable () -> any LeafA }
struct LeafFactoryKey: DependencyKey { static let liveValue = LeafFactory { A() } }
struct LeafBFactoryKey: DependencyKey { static let liveValue: @Sendable () -> any LeafB = { B() } }
struct LeafCFactoryKey: DependencyKey { static let liveValue: @Sendable () -> any LeafC = { C() } }

/// Mosaic: a kernel whose one module provides every benchmark service.
func mosaicServices() async throws -> Services {
    let module = ModuleFactory(
        manifest: Manifest(id: "bench.services", version: "1.0.0"),
        register: { module in
            module.services.singleton(.shared) { SharedImpl() }
            module.services.transient(.leafA) { A() }
            module.services.transient(.leafB) { B() }
            module.services.transient(.leafC) { C() }
            module.services.transient(ServiceKey(Root.self)) { (a: any LeafA, b: any LeafB, c: any LeafC) in
                Root(a: a, b: b, c: c)
            }
        },
        make: { NoOpModule() })
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(
        catalog: {
            var c = ModuleCatalog()
            c.add(module)
            return c
        }(),
        host: HostEnvironment(version: "1.0.0"), logger: quiet)
    try await kernel.boot()
    // A dropped kernel withdraws its modules and their services: keep it for the rest of the run.
    bootedKernels.withLock { $0.append(kernel) }
    return await kernel.services
}

/// The kernels `mosaicServices()` booted, kept alive while their services are measured.
let bootedKernels = Mutex<[Kernel]>([])

func swinjectContainer() -> Container {
    let container = Container()
    container.register((any Shared).self) { _ in SharedImpl() }.inObjectScope(.container)
    container.register((any LeafA).self) { _ in A() }.inObjectScope(.transient)
    container.register((any LeafB).self) { _ in B() }.inObjectScope(.transient)
    container.register((any LeafC).self) { _ in C() }.inObjectScope(.transient)
    container.register(Root.self) { r in
        Root(a: r.resolve((any LeafA).self)!, b: r.resolve((any LeafB).self)!, c: r.resolve((any LeafC).self)!)
    }.inObjectScope(.transient)
    return container
}

/// Nanoseconds per operation: the median of `runs` timings of `count` operations.
func nanoseconds(count: Int = 200_000, runs: Int = 7, _ operation: () throws -> Void) rethrows -> Double {
    var timings: [Double] = []
    for _ in 0..<(runs + 1) {
        let start = ContinuousClock.now
        for _ in 0..<count { try operation() }
        timings.append(start.duration(to: .now).nanoseconds / Double(count))
    }
    return timings.dropFirst().sorted()[runs / 2]
}

/// Nanoseconds per resolution when `threads` threads each resolve `count` times at once.
func nanosecondsInParallel(threads: Int, count: Int = 2_000_000, _ operation: @escaping @Sendable () -> Void) -> Double
{
    var timings: [Double] = []
    for _ in 0..<5 {
        let group = DispatchGroup()
        let start = ContinuousClock.now
        for _ in 0..<threads {
            group.enter()
            Thread {
                for _ in 0..<count { operation() }
                group.leave()
            }.start()
        }
        group.wait()
        timings.append(start.duration(to: .now).nanoseconds / Double(count))
    }
    return timings.sorted()[2]
}

func runServiceBenchmark() async throws {
    let mosaic = try await mosaicServices()
    let swinject = swinjectContainer()
    let holder = SharedImpl()
    print("\nServices: ns per resolution, median of 7 runs of 200,000 (release build)\n")
    let widths = [26, 10, 10, 14, 12]
    print(row(["case", "direct", "Mosaic", "swift-deps", "Swinject"], widths: widths))
    func line(_ name: String, _ values: [Double]) {
        print(row([name] + values.map { format($0, places: 1) }, widths: widths))
    }
    line(
        "singleton",
        [
            nanoseconds { consume(holder) },
            try nanoseconds { consume(try mosaic.resolve(.shared)) },
            nanoseconds { consume(Dependency(SharedKey.self).wrappedValue) },
            nanoseconds { consume(swinject.resolve((any Shared).self)!) },
        ])
    line(
        "singleton, borrowed",
        [
            nanoseconds { consume(holder.value) },
            try nanoseconds { consume(try mosaic.withService(.shared) { $0.value }) },
            nanoseconds { consume(Dependency(SharedKey.self).wrappedValue.value) },
            nanoseconds { consume(swinject.resolve((any Shared).self)!.value) },
        ])
    line(
        "transient",
        [
            nanoseconds { consume(A() as any LeafA) },
            try nanoseconds { consume(try mosaic.resolve(.leafA)) },
            nanoseconds { consume(Dependency(LeafFactoryKey.self).wrappedValue.make()) },
            nanoseconds { consume(swinject.resolve((any LeafA).self)!) },
        ])
    line(
        "root + 3 dependencies",
        [
            nanoseconds { consume(Root(a: A(), b: B(), c: C())) },
            try nanoseconds { consume(try mosaic.resolve(ServiceKey(Root.self))) },
            nanoseconds {
                consume(
                    Root(
                        a: Dependency(LeafFactoryKey.self).wrappedValue.make(),
                        b: Dependency(LeafBFactoryKey.self).wrappedValue(),
                        c: Dependency(LeafCFactoryKey.self).wrappedValue()))
            },
            nanoseconds { consume(swinject.resolve(Root.self)!) },
        ])
    let shared: any Shared = holder
    print("\nA singleton from 1 and from 2 threads at once: wall time per resolution, ns")
    for (name, resolve) in [
        ("direct", { @Sendable in consume(shared) }),
        ("Mosaic", { @Sendable in consume(try? mosaic.resolve(.shared)) }),
        ("Mosaic, borrowed", { @Sendable in consume(try? mosaic.withService(.shared) { $0.value }) }),
    ] as [(String, @Sendable () -> Void)] {
        let one = nanosecondsInParallel(threads: 1, resolve)
        let two = nanosecondsInParallel(threads: 2, resolve)
        print(
            "  \(name): 1 thread \(format(one, places: 1)), 2 threads \(format(two, places: 1)) → ratio \(format(two / one))"
        )
    }
    try await runManyServicesBenchmark()
}
