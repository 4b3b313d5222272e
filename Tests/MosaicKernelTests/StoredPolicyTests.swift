import Foundation
import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

/// Entitlement decisions shared in memory, which the test makes unreadable (a database that does not answer) and
/// readable again.
final class FlakyPolicyStore: PolicyStore {
    struct Unreadable: Error {}

    private let decided = Locked<[Entitlement: Bool]>([:])
    private let readable = Atomic(true)

    func decisions() throws -> [Entitlement: Bool] {
        guard readable.load(ordering: .acquiring) else { throw Unreadable() }
        return decided.withLock { $0 }
    }

    func decide(_ entitlement: Entitlement, granted: Bool) {
        decided.withLock { $0[entitlement] = granted }
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) -> StoreWatch { StoreWatch {} }

    func setReadable(_ isReadable: Bool) { readable.store(isReadable, ordering: .releasing) }
}

@Suite(.timeLimit(.minutes(1))) struct StoredPolicyTests {
    /// A kernel with a module that needs `sports`, sharing its policy through `store`, on `clock`.
    static func kernel(sharing store: FlakyPolicyStore, clock: ManualClock) -> Kernel {
        var options = KernelOptions(clock: clock)
        options.externalStorage = ExternalStorage(
            state: SilentStateStore(), policy: store, events: MemoryEventStore(clock: KernelClock(clock)),
            description: "the test's storage")
        return makeKernel([probe("com.app.sports", entitlements: ["sports"])], options: options)
    }

    /// Waits until the kernel's read of the policy that the clock started has succeeded and been applied.
    static func policyRead(by kernel: Kernel) async {
        while await kernel.diagnostics.contains(where: { $0.code == .storedPolicyUnavailable }) {
            await Task.yield()
        }
        // The read succeeded; the operation applying it still runs. Another operation runs after it.
        await kernel.refreshStoredPolicy()
    }

    @Test("a failed read of the stored policy keeps the policy read last: no module is switched off")
    func aFailedReadKeepsThePolicy() async throws {
        let clock = ManualClock()
        let store = FlakyPolicyStore()
        store.decide("sports", granted: true)
        let kernel = Self.kernel(sharing: store, clock: clock)
        try await kernel.boot()
        #expect(await kernel.state(of: "com.app.sports") == .active)

        // Another instance's decision is announced while the database does not answer.
        store.setReadable(false)
        await kernel.refreshStoredPolicy()
        #expect(await kernel.state(of: "com.app.sports") == .active)
        let problem = try #require(await kernel.diagnostics.first { $0.code == .storedPolicyUnavailable })
        #expect(problem.message.contains("the policy read last is kept"), "\(problem.message)")
        // Meanwhile the instance says it is not ready: the others may have decided what it has not read.
        let failing = await kernel.readinessChecks().first { !$0.passing }
        #expect(failing?.name == "stored policy")
        #expect(failing?.detail.contains("Check that the database is reachable") == true)

        // The read is tried again a second later on the kernel's clock, and finds the revoke made meanwhile.
        store.decide("sports", granted: false)
        store.setReadable(true)
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        await Self.policyRead(by: kernel)
        #expect(await kernel.state(of: "com.app.sports") != .active)
        #expect(await kernel.readinessChecks().map(\.passing) == [true])
        await kernel.shutdown()
    }

    @Test("an instance that boots while the policy cannot be read grants nothing, and reads it again until it can")
    func bootWithoutThePolicy() async throws {
        let clock = ManualClock()
        let store = FlakyPolicyStore()
        store.decide("sports", granted: true)
        store.setReadable(false)
        let kernel = Self.kernel(sharing: store, clock: clock)
        try await kernel.boot()
        #expect(await kernel.state(of: "com.app.sports") != .active)

        // Each failure doubles the wait: 1 s, then 2 s.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        await clock.sleepers(reaching: 1, dueWithin: .seconds(2))
        let second = try #require(await kernel.diagnostics.first { $0.code == .storedPolicyUnavailable })
        #expect(second.message.contains("read again in 2.0 seconds"), "\(second.message)")

        store.setReadable(true)
        clock.advance(by: .seconds(2))
        await Self.policyRead(by: kernel)
        #expect(await kernel.state(of: "com.app.sports") == .active)
        await kernel.shutdown()
    }
}
