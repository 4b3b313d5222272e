import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

/// Records which module ran what, in order.
final class Journal: Sendable {
    private let entries = Locked<[String]>([])
    private let feed = AsyncStream.makeStream(of: String.self)
    func add(_ entry: String) {
        entries.withLock { $0.append(entry) }
        feed.continuation.yield(entry)
    }
    var all: [String] { entries.withLock { $0 } }
    /// Returns once `entry` has been added (for one waiting reader).
    func first(_ entry: String) async { for await added in feed.stream where added == entry { return } }
}

/// A module that writes to `journal` in `phases` and on `events`, after running `work`.
func participant(
    _ id: ModuleID, requires dependencies: [Dependency] = [], entitlements: Set<Entitlement> = [],
    phases: [LifecyclePhase] = [.launch], events: [HostEvent.Kind] = [], journal: Journal,
    work: @escaping @Sendable () async throws -> Void = {}
) -> ModuleFactory {
    serviceModule(id, requires: dependencies, entitlements: entitlements) { module in
        for phase in phases {
            module.participate(in: phase) { _ in
                try await work()
                journal.add("\(id) \(phase)")
            }
        }
        for kind in events {
            module.listen(to: kind) { event, _ in journal.add("\(id) \(event)") }
        }
    }
}

struct RefreshFailed: Error {}

@Suite struct PhaseTests {
    @Test("participants run in dependency order with their services, and their time is in the boot report")
    func dependencyOrder() async throws {
        let journal = Journal()
        let seen = Locked<Int?>(nil)
        let kernel = makeKernel([
            participant("com.app.dashboard", requires: [.module("com.app.weather")], journal: journal),
            participant("com.app.weather", requires: [.module("com.app.location")], journal: journal),
            participant("com.app.location", journal: journal),
            serviceModule("com.app.time") { module in
                module.services.singleton(.clock) { FixedClock(now: 5) }
                module.participate(in: .launch) { context in
                    let clock = try context.services.resolve(.clock)
                    seen.withLock { $0 = clock.now }
                }
            },
        ])
        try await kernel.boot()
        let report = try await kernel.run(.launch)
        #expect(journal.all == ["com.app.location launch", "com.app.weather launch", "com.app.dashboard launch"])
        #expect(seen.withLock { $0 } == 5)
        #expect(report.entries.count == 4)
        #expect(report.failures.isEmpty)
        #expect(await kernel.report()["com.app.weather"]?.phaseTimes[.launch] != nil)
        #expect(await kernel.report()["com.app.weather"]?.phaseTimes[.postUI] == nil)
        await kernel.shutdown()
    }

    @Test(
        "a participant that throws or hangs is reported, and the phase goes on for the others", .timeLimit(.minutes(1)))
    func failingParticipantIsolated() async throws {
        let journal = Journal()
        let gate = Gate()
        let clock = ManualClock()
        let kernel = makeKernel(
            [
                participant("com.app.broken", journal: journal) { throw RefreshFailed() },
                participant("com.app.stuck", journal: journal) { await gate.wait() },
                participant("com.app.after", requires: [.module("com.app.broken")], journal: journal),
                participant("com.app.fine", journal: journal),
            ], options: KernelOptions(participantTimeLimit: .seconds(10), clock: clock))
        try await kernel.boot()
        let run = Task { try await kernel.run(.launch) }
        // The participants' limit, not the stranded-handler sweep's timer (an hour away) that boot set.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(10))
        // One timer covers every participant under way: wait until all but the stuck one are recorded (after runs
        // once broken is done; stuck was queued before fine, so it has started), so that only stuck times out.
        for id: ModuleID in ["com.app.after", "com.app.fine"] {
            while await kernel.report()[id]?.phaseTimes[.launch] == nil { await Task.yield() }
        }
        clock.advance(by: .seconds(10))
        let report = try await run.value
        gate.open()
        #expect(Set(journal.all) == ["com.app.after launch", "com.app.fine launch"])
        #expect(
            report["com.app.broken"]?.outcome
                == .failed("com.app.broken's participant in launch threw: RefreshFailed()"))
        #expect(report["com.app.stuck"]?.outcome == .timedOut)
        #expect(report.failures.count == 2)
        let codes = await kernel.diagnostics.map(\.code)
        #expect(codes.contains(.participantFailed) && codes.contains(.participantTimedOut))
        #expect(
            await kernel.state(of: "com.app.broken")?.isActive == true, "a failed participant leaves its module active")
        await kernel.shutdown()
    }

    @Test("background refresh can be run again and again")
    func repeatedPhase() async throws {
        let journal = Journal()
        let kernel = makeKernel([participant("com.app.weather", phases: [.backgroundRefresh], journal: journal)])
        try await kernel.boot()
        for _ in 0..<3 { try await kernel.run(.backgroundRefresh) }
        try await kernel.run(.launch)
        #expect(journal.all == Array(repeating: "com.app.weather backgroundRefresh", count: 3))
        await kernel.shutdown()
    }

    @Test("host events reach the listeners of active modules only, custom kinds included")
    func hostEvents() async throws {
        let journal = Journal()
        let kernel = makeKernel(
            [
                participant(
                    "com.app.weather", entitlements: ["weather"], events: [.openedURL, "themeChanged"], journal: journal
                ),
                participant("com.app.sports", events: [.enteredBackground], journal: journal),
            ], entitlements: ["weather"])
        try await kernel.boot()
        try await kernel.send(HostEvent(.openedURL, url: "ghost://weather/city?name=Oslo"))
        try await kernel.send(HostEvent("themeChanged"))
        try await kernel.send(HostEvent(.enteredBackground))
        try await kernel.revoke("weather")
        let report = try await kernel.send(HostEvent("themeChanged"))
        #expect(report.entries.isEmpty)
        #expect(
            journal.all == [
                "com.app.weather openedURL ghost://weather/city?name=Oslo", "com.app.weather themeChanged",
                "com.app.sports enteredBackground",
            ])
        await kernel.shutdown()
    }

    @Test("phases and events need a booted kernel")
    func needsBoot() async {
        let kernel = makeKernel([])
        await #expect(throws: KernelError.self) { try await kernel.run(.launch) }
        await #expect(throws: KernelError.self) { try await kernel.send(HostEvent(.launched)) }
    }
}
