// The process `Scripts/crash-points.py` kills: one instance of an app that publishes numbered `Work` events, each in
// a transaction that records its number among the published ones, and handles each with two durable handlers that
// take a transaction, each recording the number among the ones it handled. At every crash point it may stop itself
// with SIGKILL (one chance in `--crash-one-in` at each), printing which point first:
//
// - before-effect: in a handler, before it records anything;
// - inside-commit: a storage transaction's statements ran, it has not committed;
// - after-commit: the storage transaction committed, the kernel has not learned of it.
//
//     crash-points --store sqlite:DIRECTORY|postgres:URL --instance N --events COUNT [--crash-one-in K] [--seed S]
//
// It publishes, eight at a time, until COUNT events of its instance are recorded as published (so a restart goes on
// where the last run stopped), then handles until it is stopped. The script checks the database afterwards.
import Foundation
import Logging
import Mosaic
import MosaicKernel
import MosaicPostgres
import Synchronization

struct Work: DurableEvent {
    static let durableName = "crash-points.work"
    let number: Int
}

/// The buckets numbers are recorded in: a key per bucket, so that no write rewrites every number.
let buckets = 32

extension StateKey where Value == Set<Int> {
    /// The numbers `instance` published, by bucket: each instance writes keys of its own.
    static func published(by instance: Int, _ bucket: Int) -> Self {
        StateKey("crash-points.published.\(instance).\(bucket)", initial: [], persistence: .database)
    }
}

extension StateKey where Value == [String: Int] {
    /// How often the handler `name` recorded each number, by number.
    static func handled(by name: String, _ bucket: Int) -> Self {
        StateKey("crash-points.\(name).\(bucket)", initial: [:], persistence: .database)
    }
}

/// The arguments, and the random choice of crashing.
struct Run: Sendable {
    var store = ""
    var instance = 0
    var events = 0
    var crashOneIn = 0
    var seed: UInt64 = 0

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Usage() }
            switch flag {
            case "--store": store = value
            case "--instance": instance = Int(value) ?? -1
            case "--events": events = Int(value) ?? -1
            case "--crash-one-in": crashOneIn = Int(value) ?? -1
            case "--seed": seed = UInt64(value) ?? 0
            default: throw Usage()
            }
        }
        guard instance >= 0, events > 0, crashOneIn >= 0, store.hasPrefix("sqlite:") || store.hasPrefix("postgres:")
        else { throw Usage() }
    }

    /// The number of the instance's `index`th event: each instance has its own million.
    func number(_ index: Int) -> Int { instance * 1_000_000 + index }
}

struct Usage: Error, CustomStringConvertible {
    var description: String {
        "usage: crash-points --store sqlite:DIRECTORY|postgres:URL --instance N --events COUNT [--crash-one-in K] "
            + "[--seed S]"
    }
}

/// A seeded generator (SplitMix64), so that a run's crashes can be replayed from its seed.
final class Chance: Sendable {
    private let state: Mutex<UInt64>
    private let oneIn: Int

    init(seed: UInt64, oneIn: Int) {
        state = Mutex(seed)
        self.oneIn = oneIn
    }

    /// Stops the process with SIGKILL, one time in `oneIn`, saying where first.
    func mayCrash(at point: String) {
        guard oneIn > 0 else { return }
        let draw = state.withLock { state -> UInt64 in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        guard draw % UInt64(oneIn) == 0 else { return }
        FileHandle.standardOutput.write(Data("crash at \(point)\n".utf8))
        kill(getpid(), SIGKILL)
    }
}

func registration(of name: String, _ module: inout ModuleRegistrar) {
    for bucket in 0..<buckets { module.writes(.handled(by: name, bucket)) }
}

/// A module whose handler `name` records each number it handles, in its transaction.
func handlerModule(_ name: String, chance: Chance) -> ModuleFactory {
    ModuleFactory(
        manifest: Manifest(id: ModuleID(rawValue: "crash-points.\(name)"), version: "1.0.0"),
        register: { registration(of: name, &$0) },
        make: { HandlerModule(name: name, chance: chance) })
}

struct HandlerModule: Module {
    static let manifest = Manifest(id: "crash-points.handler", version: "1.0.0")
    var name = ""
    var chance = Chance(seed: 0, oneIn: 0)

    init() {}
    init(name: String, chance: Chance) {
        self.name = name
        self.chance = chance
    }

    func activate(_ context: ActivationContext) async throws {
        let (name, chance) = (name, chance)
        try await context.events.handle(Work.self, as: name) { envelope, transaction in
            chance.mayCrash(at: "before-effect")
            let number = envelope.event.number
            transaction.update(.handled(by: name, number % buckets)) { $0["\(number)", default: 0] += 1 }
        }
    }
}

/// The module that publishes, as `instance`; it hands out its context.
func publisherModule(_ instance: Int) -> ModuleFactory {
    ModuleFactory(
        manifest: Manifest(id: "crash-points.publisher", version: "1.0.0"),
        register: { module in for bucket in 0..<buckets { module.writes(.published(by: instance, bucket)) } },
        make: { PublisherModule() })
}

struct PublisherModule: Module {
    static let manifest = Manifest(id: "crash-points.publisher", version: "1.0.0")
    static let context = Mutex<ActivationContext?>(nil)
    func activate(_ context: ActivationContext) async throws { Self.context.withLock { $0 = context } }
}

let run: Run
do {
    run = try Run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(64)
}
let chance = Chance(seed: run.seed, oneIn: run.crashOneIn)
FaultPoints.install { point in chance.mayCrash(at: point.rawValue) }

var quiet = Logger(label: "crash-points")
quiet.logLevel = .error
var options = KernelOptions(storageTimeLimit: .seconds(30))
options.durableEvents = DurableEventOptions(claimLease: .seconds(5), pollInterval: .milliseconds(200), batchSize: 16)
let database: PostgresBackend?
if run.store.hasPrefix("postgres:") {
    database = try await PostgresBackend.connect(url: String(run.store.dropFirst("postgres:".count)))
    options.externalStorage = database?.storage
} else {
    database = nil
    options.stateDirectory = String(run.store.dropFirst("sqlite:".count))
}
var catalog = ModuleCatalog()
catalog.add(publisherModule(run.instance))
for name in ["count", "mark"] { catalog.add(handlerModule(name, chance: chance)) }
let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), options: options, logger: quiet)
let report = try await kernel.boot()
guard report.modules.allSatisfy({ $0.state.isActive }), let publisher = PublisherModule.context.withLock({ $0 })
else {
    FileHandle.standardError.write(Data("not every module started:\n\(report.table)\n".utf8))
    exit(1)
}
for bucket in 0..<buckets { await publisher.state.load(.published(by: run.instance, bucket)) }
let published = (0..<buckets).reduce(into: Set<Int>()) {
    $0.formUnion(publisher.state[.published(by: run.instance, $1)])
}
// Numbers go on after the highest the database has; some below it may be missing (in flight when a run was killed,
// never committed), so a run publishes until the instance has `events` of them.
var next = published.map { $0 % 1_000_000 }.max().map { $0 + 1 } ?? 0
var count = published.count
FileHandle.standardOutput.write(Data("started at \(next) with \(count)\n".utf8))
while count < run.events {
    let batch = (next..<next + min(8, run.events - count)).map(run.number)
    next += batch.count
    await withTaskGroup(of: Void.self) { group in
        for number in batch {
            group.addTask {
                do {
                    try await publisher.state.transaction { transaction in
                        transaction.update(.published(by: run.instance, number % buckets)) { $0.insert(number) }
                        transaction.publish(Work(number: number))
                    }
                } catch {
                    // Whether a failed transaction was stored is for the next run to read from the database.
                    FileHandle.standardError.write(Data("publish \(number): \(error)\n".utf8))
                    exit(1)
                }
            }
        }
    }
    count += batch.count
}
FileHandle.standardOutput.write(Data("published \(run.events)\n".utf8))
// Handles until stopped.
let (stop, stopped) = AsyncStream.makeStream(of: Void.self)
let signals = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
signal(SIGTERM, SIG_IGN)
signals.setEventHandler { stopped.yield() }
signals.resume()
for await _ in stop { break }
await kernel.shutdown()
await database?.close()
FileHandle.standardOutput.write(Data("stopped\n".utf8))
