// Mosaic's benchmarks. Run from the repository root:
//   swift run -c release --package-path Benchmarks
// `… MosaicBenchmarks scaling` prints validation and boot medians from 1,000 to 20,000 modules;
// `… MosaicBenchmarks boot-memory [COUNT]` prints the resident memory per module that a catalog of COUNT modules
// (10,000 unless given), its validation, `Kernel(catalog:)` and `boot()` each keep;
// `… MosaicBenchmarks profile-boot [COUNT]` boots COUNT modules (10,000 unless given) as many times as make 100,000
// module boots, for `perf record` (profiles of two counts compare per module);
// `… MosaicBenchmarks on-demand` boots 100 Ghost-shaped modules, 90 of them on demand, against all 100 at boot, and
// times the first link to a module on standby; `profile-on-demand ON_DEMAND TIMES` boots that app TIMES times with
// ON_DEMAND modules on demand and prints nothing (callgrind.sh on-demand);
// `… MosaicBenchmarks budget OPERATION COUNT` repeats one of the operations budgets.sh counts (BudgetOperations.swift)
// COUNT times and prints nothing;
// `… MosaicBenchmarks injected` compares an `@Injected` read with `resolve`;
// `… MosaicBenchmarks singleton` compares `resolve` and `withService` of a singleton with a global `let`, 1 and 2 threads;
// `… MosaicBenchmarks many` is the services mode's last table alone: 1,000 services registered and resolved, warm
// and in a new process, with its peers;
// `… MosaicBenchmarks cold CONTENDER` registers and resolves 1,000 services once and prints milliseconds;
// `… MosaicBenchmarks profile-events ROUNDS` / `profile-state ROUNDS` fan out ROUNDS (+10) times to 1,000 readers
// and print nothing (ROUNDS other than 50, which is the printed benchmark), for `perf record` or for counting
// instructions per delivery (the difference of two ROUNDS, as the README does with 40 and 240);
// `… MosaicBenchmarks propagation URL` times a state write on one instance reaching an observer on another through
// the PostgreSQL database at URL (postgres.sh starts a cluster of its own and runs it);
// `… MosaicBenchmarks durable URL [RATE]` measures durable events there (with RATE, also the latency at RATE events/s,
// as peers.sh runs it beside its peers), and state writes (postgres.sh durable), and `durable-publish URL COUNT` /
// `durable-consume URL` are the two roles durable-crash.py runs as processes and kills;
// `… MosaicBenchmarks isolation` calls a route served by a module in a process of its own, in process and over a
// bare child's pipes, and states the isolated process's resident memory;
// `… MosaicBenchmarks durable-tx [URL]` drains a backlog with a handler that counts in its transaction against one that
// writes its count and records its completion apart, on the embedded store and (with URL) PostgreSQL (postgres.sh durable-tx).
import Foundation
import Logging
import Mosaic
import MosaicKernel
import MosaicPostgres

// Started by the isolation benchmark's kernel to run its module in a process of its own.
if let status = await IsolatedModuleProcess.serveIfAsked(isolationCatalog) { exit(status) }

/// The number a mode takes (rounds, or modules): its second argument, or `standard` when there is none.
func numberArgument(standard: Int) -> Int {
    CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? standard : standard
}

if CommandLine.arguments.dropFirst().first == "scaling" {
    for count in [1_000, 2_000, 5_000, 10_000, 20_000] {
        let catalog = syntheticCatalog(count: count)
        let samples = await measure(runs: 10) {
            _ = ModuleGraph(catalog: catalog, host: HostEnvironment(version: "1.0.0"))
        }
        var quiet = Logger(label: "bench")
        quiet.logLevel = .critical
        let boot = try await measure(runs: 10) {
            _ = try await Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quiet).boot()
        }
        print(count, format(samples.median.milliseconds), "ms", format(boot.median.milliseconds), "ms")
    }
} else if CommandLine.arguments.dropFirst().first == "boot-memory" {
    try await runBootMemory(count: numberArgument(standard: 10_000))
} else if CommandLine.arguments.dropFirst().first == "on-demand" {
    try await runOnDemandBenchmark()
} else if CommandLine.arguments.dropFirst().first == "budget" {
    // A misspelt operation must stop here, not fall through to the default mode (every benchmark, under valgrind).
    guard CommandLine.arguments.count > 3, let operation = budgetOperations[CommandLine.arguments[2]],
        let count = Int(CommandLine.arguments[3])
    else {
        fatalError("usage: MosaicBenchmarks budget OPERATION COUNT, OPERATION one of \(budgetOperations.keys.sorted())")
    }
    try await operation(count)
} else if CommandLine.arguments.dropFirst().first == "profile-on-demand", CommandLine.arguments.count > 3 {
    try await profileOnDemandBoot(
        onDemand: Int(CommandLine.arguments[2]) ?? 90, times: Int(CommandLine.arguments[3]) ?? 10)
} else if CommandLine.arguments.dropFirst().first == "boot-phases" {
    try await runBootPhases()
} else if CommandLine.arguments.dropFirst().first == "profile-boot" {
    let count = numberArgument(standard: 10_000)
    let catalog = syntheticCatalog(count: count)
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    for _ in 0..<max(1, 100_000 / count) {
        _ = try await Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quiet).boot()
    }
} else if CommandLine.arguments.dropFirst().first == "profile-singleton" {
    let services = try await mosaicServices()
    for _ in 0..<50_000_000 { consume(try services.resolve(.shared)) }
} else if CommandLine.arguments.dropFirst().first == "profile-borrowed" {
    let services = try await mosaicServices()
    for _ in 0..<numberArgument(standard: 50_000_000) { consume(try services.withService(.shared) { $0.value }) }
} else if CommandLine.arguments.dropFirst().first == "profile-root" {
    let services = try await mosaicServices()
    for _ in 0..<numberArgument(standard: 10_000_000) { consume(try services.resolve(ServiceKey(Root.self))) }
} else if CommandLine.arguments.dropFirst().first == "profile-many" {
    for _ in 0..<numberArgument(standard: 300) { _ = try await registerAndResolveMany("mosaic") }
} else if CommandLine.arguments.dropFirst().first == "profile-revoke" {
    try await runContributionBenchmark(rounds: 1_000, reads: 10)
} else if CommandLine.arguments.dropFirst().first == "profile-events", CommandLine.arguments.count > 2 {
    try await runEventBenchmark(rounds: Int(CommandLine.arguments[2]) ?? 1_000)
} else if CommandLine.arguments.dropFirst().first == "profile-state", CommandLine.arguments.count > 2 {
    try await runStateBenchmark(rounds: Int(CommandLine.arguments[2]) ?? 1_000)
} else if CommandLine.arguments.dropFirst().first == "propagation", CommandLine.arguments.count > 2 {
    try await runPropagationBenchmark(url: CommandLine.arguments[2])
} else if CommandLine.arguments.dropFirst().first == "durable", CommandLine.arguments.count > 2 {
    let fixedRate = CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3]) : nil
    try await runDurableBenchmark(url: CommandLine.arguments[2], fixedRate: fixedRate)
    let backend = try await PostgresBackend.connect(url: CommandLine.arguments[2])
    try await runStateWriteBenchmark(title: "PostgreSQL", externalStorage: backend.storage)
    await backend.close()
} else if CommandLine.arguments.dropFirst().first == "durable-tx" {
    try await runTransactionalBenchmark(postgres: CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : nil)
} else if CommandLine.arguments.dropFirst().first == "durable-publish", CommandLine.arguments.count > 3 {
    try await runDurablePublisher(url: CommandLine.arguments[2], count: Int(CommandLine.arguments[3]) ?? 10_000)
} else if CommandLine.arguments.dropFirst().first == "durable-consume", CommandLine.arguments.count > 2 {
    try await runDurableConsumer(url: CommandLine.arguments[2])
} else if CommandLine.arguments.dropFirst().first == "isolation" {
    try await runIsolationBenchmark()
} else if CommandLine.arguments.dropFirst().first == "state" {
    try await runStateBenchmark()
    try await runStateWriteBenchmark(title: "SQLite")
} else if CommandLine.arguments.dropFirst().first == "events" {
    try await runEventBenchmark()
} else if CommandLine.arguments.dropFirst().first == "operations" {
    try await runOperationsBenchmark()
} else if CommandLine.arguments.dropFirst().first == "deeplinks" {
    try await runDeeplinkBenchmark()
} else if CommandLine.arguments.dropFirst().first == "contributions" {
    try await runContributionBenchmark()
} else if CommandLine.arguments.dropFirst().first == "injected" {
    try await runInjectedBenchmark()
} else if CommandLine.arguments.dropFirst().first == "singleton" {
    try await runSingletonBenchmark()
} else if CommandLine.arguments.dropFirst().first == "services" {
    try await runServiceBenchmark()
} else if CommandLine.arguments.dropFirst().first == "many" {
    try await runManyServicesBenchmark()
} else if CommandLine.arguments.dropFirst().first == "cold", CommandLine.arguments.count > 2 {
    print(try await registerAndResolveMany(CommandLine.arguments[2]).milliseconds)
} else {
    try await runBootBenchmark()
    try await runServiceBenchmark()
    try await runContributionBenchmark()
    try await runDeeplinkBenchmark()
    try await runEventBenchmark()
    try await runStateBenchmark()
    try await runStateWriteBenchmark(title: "SQLite")
}
