import Foundation
import Logging
import Mosaic
import MosaicKernel
import Synchronization

// The child-process half of the failure-isolation test: module code reads services through @Injected whose
// factories throw (in init/activate, in a content closure, in a link handler), reads a feed from two tasks, and
// reads a configuration key it did not declare. The process must live through all
// of it and print what became of each module and call.

protocol Weather: Sendable { var text: String { get } }

extension ServiceKey where Value == any Weather {
    static var weather: Self { Self() }
}
struct SunnyWeather: Weather { var text: String { "sunny" } }
struct MissingData: Error, CustomStringConvertible { var description: String { "weather.json is missing" } }

/// Whether the flaky factory fails now.
let failing = Atomic<Bool>(false)

struct WeatherReader {
    @Injected(.weather) var weather
}

/// Reads the broken provider's service through @Injected while it activates.
struct BrokenConsumer: Module {
    static let manifest = Manifest(id: "com.child.consumer", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) { module.services.use(.weather) }
    @Injected(.weather) var weather
    func activate(_ context: ActivationContext) async throws { _ = try weather().text }
}

func failingServicesCatalog() -> ModuleCatalog {
    var catalog = ModuleCatalog()
    catalog.add(
        ModuleFactory(
            manifest: Manifest(id: "com.child.broken", version: "1.0.0"),
            register: {
                $0.services.singleton(.weather, eager: true) { () throws -> any Weather in throw MissingData() }
            }
        ) { ChildModule() })
    catalog.add(ModuleFactory(BrokenConsumer.self))
    catalog.add(
        ModuleFactory(
            manifest: Manifest(id: "com.child.flaky", version: "1.0.0"),
            register: { module in
                module.services.transient(ServiceKey(String.self)) { () throws -> String in
                    if failing.load(ordering: .relaxed) { throw MissingData() }
                    return "fine"
                }
                module.contribute(to: .dashboardWidgets, id: "flaky", title: "Flaky") {
                    let reader = FlakyReader()
                    failing.store(true, ordering: .relaxed)
                    return Panel(.text(try reader.value()))
                }
                module.handle(feature: "flaky") { _, _ in
                    failing.store(false, ordering: .relaxed)
                    let reader = FlakyReader()
                    failing.store(true, ordering: .relaxed)
                    _ = try reader.value()
                }
            }
        ) { ChildModule() })
    catalog.add(ModuleFactory(manifest: Manifest(id: "com.child.bystander", version: "1.0.0")) { ChildModule() })
    catalog.add(ModuleFactory(PingModule.self))
    catalog.add(ModuleFactory(CarelessConfigurationReader.self))
    return catalog
}

struct FlakyReader {
    @Injected(ServiceKey(String.self)) var value
}

/// Reads a configuration key it never declared, which has no default: before, that stopped the process.
struct CarelessConfigurationReader: Module {
    static let manifest = Manifest(id: "com.child.careless", version: "1.0.0")
    func activate(_ context: ActivationContext) async throws {
        _ = try context.configuration[ConfigurationKey<String>("endpoint")]
    }
}

struct ChildModule: Module {
    static let manifest = Manifest(id: "com.child.module", version: "1.0.0")
}

/// Boots the catalog, exercises every path, and prints one line per outcome.
func runFailingServices() async {
    var quiet = Logger(label: "failing-services")
    quiet.logLevel = .critical
    let kernel = Kernel(
        catalog: failingServicesCatalog(), host: HostEnvironment(version: "1.0.0", schemes: ["ghost"]), logger: quiet)
    _ = try? await kernel.boot()
    let report = await kernel.report()
    for entry in report.modules { print("\(entry.id): \(entry.state.name)") }
    do {
        _ = try await kernel.allContributions.values(of: .dashboardWidgets)
        print("content: built")
    } catch {
        print("content: refused: \(error)")
    }
    failing.store(false, ordering: .relaxed)
    switch await kernel.open("ghost://dashboard/flaky") {
    case .handled: print("link: handled")
    case .notHandled(let error): print("link: not handled: \(error.code)")
    }
    print("two readers: \(await twoReadersOfOneFeed(kernel))")
    await kernel.shutdown()
    print("alive")
}

struct Ping: Sendable {}

/// A module that hands out its events, so that the check can read one feed from two tasks.
struct PingModule: Module {
    static let manifest = Manifest(id: "com.child.ping", version: "1.0.0")
    static let events = Locked<Events?>(nil)
    func activate(_ context: ActivationContext) async throws { Self.events.withLock { $0 = context.events } }
}

/// One feed iterated by two tasks at once: the later one's loop ends, the other gets the next event. What each
/// reader saw, sorted: `ended` and `got a ping` when the second reader is refused instead of stopping the process.
func twoReadersOfOneFeed(_ kernel: Kernel) async -> String {
    guard let events = PingModule.events.withLock({ $0 }) else { return "com.child.ping did not activate" }
    let feed = events.subscribe(to: Ping.self)
    let (outcomes, report) = AsyncStream.makeStream(of: String.self)
    for _ in 0..<2 {
        Task {
            var saw = "ended"
            for await _ in feed {
                saw = "got a ping"
                break
            }
            report.yield(saw)
        }
    }
    var seen: [String] = []
    for await outcome in outcomes {
        seen.append(outcome)
        // The first to finish is the refused reader; the other still waits, for the event sent now.
        if seen.count == 1 { try? events.publish(Ping()) }
        if seen.count == 2 { break }
    }
    return seen.sorted().joined(separator: ", ")
}
