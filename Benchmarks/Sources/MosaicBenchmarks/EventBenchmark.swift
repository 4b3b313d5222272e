import Logging
import Mosaic
import MosaicKernel

struct Tick: Sendable { let round: Int }

/// One event to 1,000 subscribers: the publisher's cost, and the time until every subscriber's task has it; then the
/// same fan-out without Mosaic. `rounds` other than 50 is for profiling (`profile-events ROUNDS`): nothing printed.
func runEventBenchmark(rounds: Int = 50) async throws {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let kernel = Kernel(catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), logger: quiet)
    try await kernel.boot()
    let events = kernel.events
    let timings = try await fanOut(
        observers: 1_000, rounds: rounds, subscribe: { events.subscribe(to: Tick.self, buffer: 1_024) },
        trigger: { round in try events.publish(Tick(round: round)) })
    await kernel.shutdown()
    guard rounds == 50 else { return }
    print("\nEvents: one event to 1,000 subscriber tasks (release build), µs, median of 50")
    print("  publish (returns to the publisher):        \(format(timings.returns, places: 1))")
    print(
        "  until all 1,000 subscribers received it:   \(format(timings.delivered, places: 1)) "
            + "(p90 \(format(timings.deliveredP90, places: 1))), \(Int(timings.delivered.rounded())) ns per delivery")
    await runFanOutFloors()
}
