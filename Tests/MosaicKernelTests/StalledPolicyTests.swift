import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

/// Entitlement decisions shared in memory, which the test stalls (a database whose backends are stopped: calls
/// reach it and never answer) until it lets them go.
final class StallingPolicyStore: PolicyStore {
    private let decided = Locked<[Entitlement: Bool]>([:])
    private let gate = Locked<Gate?>(nil)
    /// How many calls have reached the storage while it was stalled.
    let stalledCalls = Locked(0)
    private let watchers = Locked<[@Sendable () -> Void]>([])

    func decisions() async throws -> [Entitlement: Bool] {
        await waitIfStalled()
        return decided.withLock { $0 }
    }

    func decide(_ entitlement: Entitlement, granted: Bool) async throws {
        await waitIfStalled()
        decided.withLock { $0[entitlement] = granted }
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) -> StoreWatch {
        watchers.withLock { $0.append(onChange) }
        return StoreWatch {}
    }

    /// Tells every watch that a decision changed, as another instance's change would.
    func announce() {
        for watcher in watchers.withLock({ $0 }) { watcher() }
    }

    /// Every call from now on waits until ``letGo()``.
    func stall() { gate.withLock { $0 = Gate() } }

    /// Answers every call held, and every later one at once.
    func letGo() {
        let held = gate.withLock { gate in
            defer { gate = nil }
            return gate
        }
        held?.open()
    }

    private func waitIfStalled() async {
        guard let gate = gate.withLock({ $0 }) else { return }
        stalledCalls.withLock { $0 += 1 }
        await gate.wait()
    }
}

@Suite(.timeLimit(.minutes(1))) struct StalledPolicyTests {
    /// A booted kernel sharing its policy through `store` with a 5 s storage time limit, with a module that needs
    /// `sports` (granted) and one that starts on demand.
    static func boot(sharing store: StallingPolicyStore, clock: ManualClock) async throws -> Kernel {
        try await store.decide("sports", granted: true)
        var options = KernelOptions(storageTimeLimit: .seconds(5), clock: clock)
        options.externalStorage = ExternalStorage(
            state: SilentStateStore(), policy: store, events: MemoryEventStore(clock: KernelClock(clock)),
            description: "storage that stalls when the test says")
        let kernel = makeKernel(
            [
                probe("com.app.sports", entitlements: ["sports"]),
                onDemandModule("com.app.scores", log: EventLog()),
            ],
            options: options)
        try await kernel.boot()
        #expect(await kernel.state(of: "com.app.sports") == .active)
        return kernel
    }

    /// Waits until a call has reached the stalled storage and its time limit's timer is set.
    static func stalled(_ calls: Int, at store: StallingPolicyStore, clock: ManualClock) async {
        // Only the storage calls' timers count, not the stranded-handler sweep's that boot set (an hour away).
        await clock.sleepers(reaching: calls, dueWithin: .seconds(5))
        await eventually { store.stalledCalls.withLock { $0 } == calls }
    }

    @Test(
        "with the storage stalled, a grant and a revoke fail at the storage time limit without holding other operations: an on-demand module starts meanwhile, and nothing changes"
    )
    func grantAndRevokeAreBounded() async throws {
        let clock = ManualClock()
        let store = StallingPolicyStore()
        let kernel = try await Self.boot(sharing: store, clock: clock)
        store.stall()
        let revoke = Task { try await kernel.revoke("sports") }
        let grant = Task { try await kernel.grant("weather") }
        await Self.stalled(2, at: store, clock: clock)

        // Neither waiting call holds the operation slot: a module starts on demand while they wait.
        #expect(try await kernel.start("com.app.scores") == .active)
        #expect(await kernel.waitingOperationCount == 0)

        clock.advance(by: .seconds(5))
        for call in [revoke, grant] {
            let error = await #expect(throws: KernelError.self) { try await call.value }
            #expect(error?.code == .storageUnavailable, "\(String(describing: error))")
            #expect(error?.message.contains("KernelOptions.storageTimeLimit") == true)
        }
        #expect(await kernel.state(of: "com.app.sports") == .active, "the revoke that failed changed nothing")
        #expect(await kernel.grantedEntitlements == ["sports"])
        store.letGo()
        await kernel.shutdown()
    }

    @Test("with the storage stalled, shutdown does not wait for a revoke's storage call, and the revoke then fails")
    func shutdownDuringAStalledRevoke() async throws {
        let clock = ManualClock()
        let store = StallingPolicyStore()
        let kernel = try await Self.boot(sharing: store, clock: clock)
        store.stall()
        let revoke = Task { try await kernel.revoke("sports") }
        await Self.stalled(1, at: store, clock: clock)

        await kernel.shutdown()
        #expect(await kernel.state(of: "com.app.sports") == .deactivated)
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: KernelError.self) { try await revoke.value }
        #expect(error?.code == .storageUnavailable)
        store.letGo()
    }

    @Test(
        "a grant applied after a read that started before it was recorded stays granted; a read started after it decides"
    )
    func laterKnowledgeWins() async throws {
        let clock = ManualClock()
        let store = StallingPolicyStore()
        let kernel = try await Self.boot(sharing: store, clock: clock)
        try await kernel.revoke("sports")
        #expect(await kernel.state(of: "com.app.sports") != .active)
        let decision = try await kernel.share("sports", granted: true)
        #expect(await kernel.apply(decision))
        // A read that started before the grant was recorded, and found it revoked, answers after it was applied.
        let stale = StoredPolicyRead(decisions: ["sports": false], number: decision.number - 1)
        #expect(await kernel.policy(after: stale)?.grants("sports") == true, "the grant recorded later is kept")
        // A read that started after the grant was recorded decides, whatever it finds.
        let later = StoredPolicyRead(decisions: ["sports": false], number: decision.number + 100)
        #expect(await kernel.policy(after: later)?.grants("sports") == false)
        await kernel.shutdown()
    }

    @Test(
        "a revoke announced while an instance boots is enforced there once its boot ends, and the instance is not ready until then"
    )
    func revokeDuringBoot() async throws {
        let clock = ManualClock()
        let store = StallingPolicyStore()
        try await store.decide("sports", granted: true)
        var options = KernelOptions(clock: clock)
        options.externalStorage = ExternalStorage(
            state: SilentStateStore(), policy: store, events: MemoryEventStore(clock: KernelClock(clock)),
            description: "the test's storage")
        let log = EventLog()
        let activating = Gate()
        let kernel = makeKernel(
            [
                probe("com.app.sports", entitlements: ["sports"]),
                probe("com.app.slow", behavior: .hang(activating), log: log),
            ],
            options: options)
        let boot = Task { try await kernel.boot() }
        await eventually { log.all.contains(.activationStarted("com.app.slow")) }
        #expect(await kernel.state(of: "com.app.sports") == .active)

        // Another instance revokes `sports` while this one's modules activate.
        try await store.decide("sports", granted: false)
        store.announce()
        while await kernel.readinessChecks().allSatisfy(\.passing) { await Task.yield() }
        let check = await kernel.readinessChecks().first { !$0.passing }
        #expect(check?.detail.contains("not enforced yet") == true, "\(String(describing: check))")

        activating.open()
        _ = try await boot.value
        while await !kernel.readinessChecks().allSatisfy(\.passing) { await Task.yield() }
        #expect(await kernel.state(of: "com.app.sports") != .active)
        #expect(await kernel.grantedEntitlements.isEmpty)
        await kernel.shutdown()
    }
}
