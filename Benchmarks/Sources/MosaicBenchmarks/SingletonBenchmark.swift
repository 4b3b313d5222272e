import BlackHole
import Foundation
import Logging
import Mosaic
import MosaicKernel
import Synchronization

/// The singleton the `singleton` mode resolves: a final class, so every form below handles one class reference.
final class HotSingleton: Sendable {
    let value: Int
    init(value: Int) { self.value = value }
}

extension ServiceKey where Value == HotSingleton {
    static var hot: Self { Self() }
}

/// The direct baseline: the same class, one instance in a global `let`, as hand-written singletons are kept.
/// Its value comes from the command line so the optimizer cannot fold reads of it into a constant.
let hotGlobal = HotSingleton(value: CommandLine.arguments.count)

/// Takes the instance owned (+1) and drops it, from another function the optimizer does not see into: what code that
/// keeps the instance (stores it, returns it, captures it) makes the caller pay.
@inline(never) @_optimize(none)
func keepOwned(_ value: __owned HotSingleton) {}

/// `count` calls of `body`, whose results are summed so none of them can be skipped; the sum goes to `blackHole`.
@inline(__always)
func sumOfCalls<E: Error>(_ count: Int, _ body: () throws(E) -> Int) throws(E) {
    var sum = 0
    for _ in 0..<count { sum &+= try body() }
    blackHole(sum)
}

/// One way of reading the singleton, timed per call on one thread and on two at once.
private struct SingletonForm {
    let name: String
    /// Runs `count` calls and returns when done.
    let run: @Sendable (_ count: Int) -> Void
}

/// Nanoseconds per call for `threads` threads each running `form` `count` times at once: wall time / `count`, and
/// the threads' mean CPU time / `count` (which, unlike wall time, does not grow when other processes take the cores
/// and the threads run by turns).
private func nanosecondsPerCall(_ form: SingletonForm, threads: Int, count: Int) -> (wall: Double, cpu: Double) {
    let group = DispatchGroup()
    let cpu = Mutex<Double>(0)
    let start = ContinuousClock.now
    for thread in 0..<threads {
        group.enter()
        Thread {
            if threads > 1 { pinToCPU(thread) }
            let before = threadCPUNanoseconds()
            form.run(count)
            let used = threadCPUNanoseconds() - before
            cpu.withLock { $0 += used }
            group.leave()
        }.start()
    }
    group.wait()
    let wall = start.duration(to: .now).nanoseconds / Double(count)
    return (wall, cpu.withLock { $0 } / Double(threads) / Double(count))
}

/// Keeps the calling thread on CPU `cpu`. The test machine's kernel packs runnable threads onto fewer CPUs when
/// it is busy, so two unpinned threads often run by turns; pinned to different CPUs they run at once more often.
private func pinToCPU(_ cpu: Int) {
    var mask = (UInt64(1) << UInt64(cpu), UInt64(0), UInt64(0), UInt64(0))
    _ = withUnsafeMutableBytes(of: &mask) { linuxSetAffinity(0, $0.count, $0.baseAddress) }
}

/// Linux's `sched_setaffinity`, which the Glibc module does not export; thread 0 is the calling thread.
@_silgen_name("sched_setaffinity")
private func linuxSetAffinity(_ thread: Int32, _ size: Int, _ mask: UnsafeMutableRawPointer?) -> Int32

/// The calling thread's CPU time in nanoseconds.
private func threadCPUNanoseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1e9 + Double(now.tv_nsec)
}

/// The `singleton` mode (issue 15, item 6): per call, `resolve` of a built singleton, `withService` of it, and
/// direct code reading a global `let` instance of the same class, on one thread and on two threads at once. Every
/// form reads `value` from the instance and passes it to `blackHole`; the "owned" forms also hand the instance to
/// `keepOwned`, as code that stores it would. Runs interleave the forms; prints median and range of `runs` runs.
func runSingletonBenchmark(runs: Int = 7, count: Int = 10_000_000) async throws {
    let module = ModuleFactory(
        manifest: Manifest(id: "bench.singleton", version: "1.0.0"),
        register: { module in module.services.singleton(.hot) { HotSingleton(value: CommandLine.arguments.count) } },
        make: { NoOpModule() })
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    var catalog = ModuleCatalog()
    catalog.add(module)
    let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quiet)
    try await kernel.boot()
    let services = await kernel.services
    // Build the singleton before measuring: every form below then reads a built instance.
    blackHole(try services.resolve(.hot))

    func resolving(_ body: @escaping @Sendable (Int) throws(ServiceError) -> Void) -> @Sendable (Int) -> Void {
        { count in
            do throws(ServiceError) { try body(count) } catch { fatalError("resolving the singleton failed: \(error)") }
        }
    }
    let forms: [SingletonForm] = [
        SingletonForm(name: "direct: global `let`, borrowed use") { count in
            sumOfCalls(count) {
                let instance = hotGlobal
                blackHole(instance)
                return instance.value
            }
        },
        SingletonForm(
            name: "Mosaic `resolve`",
            run: resolving { count throws(ServiceError) in
                try sumOfCalls(count) { () throws(ServiceError) -> Int in
                    let instance = try services.resolve(.hot)
                    blackHole(instance)
                    return instance.value
                }
            }),
        SingletonForm(
            name: "Mosaic `withService`",
            run: resolving { count throws(ServiceError) in
                try sumOfCalls(count) { () throws(ServiceError) -> Int in
                    try services.withService(.hot) { instance in
                        blackHole(instance)
                        return instance.value
                    }
                }
            }),
        SingletonForm(name: "direct: global `let`, owned use") { count in
            sumOfCalls(count) {
                let instance = hotGlobal
                let value = instance.value
                keepOwned(instance)
                return value
            }
        },
        SingletonForm(
            name: "Mosaic `resolve`, owned use",
            run: resolving { count throws(ServiceError) in
                try sumOfCalls(count) { () throws(ServiceError) -> Int in
                    let instance = try services.resolve(.hot)
                    let value = instance.value
                    keepOwned(instance)
                    return value
                }
            }),
    ]
    for form in forms { form.run(count / 10) }  // warm-up
    var wall = [[Double]](repeating: [], count: forms.count * 2)
    var cpu = [[Double]](repeating: [], count: forms.count * 2)
    for _ in 0..<runs {
        for (index, form) in forms.enumerated() {
            for threads in 1...2 {
                let timing = nanosecondsPerCall(form, threads: threads, count: count)
                wall[index * 2 + threads - 1].append(timing.wall)
                cpu[index * 2 + threads - 1].append(timing.cpu)
            }
        }
    }
    var load = [0.0, 0.0, 0.0]
    _ = getloadavg(&load, 3)
    print(
        "\nSingleton: ns per call per thread, median (range) of \(runs) runs of \(count) calls; wall time and the"
            + " threads' CPU time; load average \(load.map { format($0) })\n")
    let widths = [36, 20, 20, 20, 20, 16]
    print(
        row(
            ["form", "1 thread, wall", "1 thread, CPU", "2 threads, wall", "2 threads, CPU", "2 at once"],
            widths: widths))
    func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return "\(format(sorted[runs / 2])) (\(format(sorted[0]))–\(format(sorted[runs - 1])))"
    }
    func median(_ values: [Double]) -> Double { values.sorted()[runs / 2] }
    var medians: [String: [Double]] = [:]
    for (index, form) in forms.enumerated() {
        let columns = [wall[index * 2], cpu[index * 2], wall[index * 2 + 1], cpu[index * 2 + 1]]
        medians[form.name] = columns.map(median)
        // How much of the time the two threads ran at once: 2 × CPU / wall, from 1 (by turns) to 2 (always).
        let overlap = zip(cpu[index * 2 + 1], wall[index * 2 + 1]).map { 2 * $0 / $1 }
        print(row([form.name] + columns.map(summary) + [summary(overlap)], widths: widths))
    }
    func ratio(_ name: String, over baseline: String) {
        guard let top = medians[name], let bottom = medians[baseline] else { return }
        let ratios = zip(top, bottom).map { format($0 / $1) }
        print(
            "  \(name) / \(baseline): 1 thread \(ratios[0]) (CPU \(ratios[1])), 2 threads \(ratios[2]) (CPU \(ratios[3]))"
        )
    }
    print("\nRatios of medians:")
    ratio("Mosaic `resolve`", over: "direct: global `let`, borrowed use")
    ratio("Mosaic `withService`", over: "direct: global `let`, borrowed use")
    ratio("Mosaic `resolve`, owned use", over: "direct: global `let`, owned use")
    await kernel.shutdown()
}
