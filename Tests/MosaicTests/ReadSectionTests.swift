import Dispatch
import Foundation
import Mosaic
import Synchronization
import Testing

/// Which `Tracked` instances are alive: made ones are added, ended ones removed.
private final class Lifetimes: Sendable {
    private let alive = Locked<Set<Int>>([])
    private let made = Atomic<Int>(0)

    func begin() -> Int {
        let id = made.add(1, ordering: .relaxed).newValue
        alive.withLock { _ = $0.insert(id) }
        return id
    }
    func end(_ id: Int) { alive.withLock { _ = $0.remove(id) } }
    func isAlive(_ id: Int) -> Bool { alive.withLock { $0.contains(id) } }
    var count: Int { alive.withLock { $0.count } }
}

private final class Tracked: Sendable {
    let id: Int
    let lifetimes: Lifetimes
    init(_ lifetimes: Lifetimes) {
        self.lifetimes = lifetimes
        id = lifetimes.begin()
    }
    deinit { lifetimes.end(id) }
}

private struct TrackedA: Sendable { let tracked: Tracked }
private struct TrackedB: Sendable { let tracked: Tracked }

/// Counts shared by a test and its threads.
private final class Counts: Sendable {
    let readersDone = Atomic<Int>(0)
    let releasesBegun = Atomic<Int>(0)
    let releasesDone = Atomic<Int>(0)
    let finishedDuringRead = Atomic<Int>(0)
    let releasing = Atomic<Bool>(false)
    let released = Atomic<Bool>(false)
}

/// Runs `body` on a thread of its own (not one of the concurrency pool's, which may be busy with the test).
private final class OwnThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    init(_ body: @escaping @Sendable () -> Void) {
        Thread.detachNewThread { [finished] in
            body()
            finished.signal()
        }
    }
    func join() { finished.wait() }
}

@Suite struct ReadSectionTests {
    @Test("a release on another thread does not finish while a read of its service is under way")
    func releaseWaitsForReaders() throws {
        let (box, view) = provider(Tracked.self) { Tracked(Lifetimes()) }
        let counts = Counts()
        let readers = (0..<2).map { _ in
            OwnThread {
                for _ in 0..<50_000 {
                    // What `withService` and `resolve` do around a built instance.
                    let address = box.beginRead()
                    if address != 0 {
                        // Releases run one after another: one that began after this read did must wait for it.
                        let begun = counts.releasesBegun.load(ordering: .sequentiallyConsistent)
                        for _ in 0..<300 { _ = counts.releasesDone.load(ordering: .relaxed) }
                        if counts.releasesDone.load(ordering: .sequentiallyConsistent) > begun {
                            counts.finishedDuringRead.add(1, ordering: .relaxed)
                        }
                    }
                    box.endRead()
                    if address == 0 { _ = try? view.resolve(ServiceKey(Tracked.self)) }
                }
                counts.readersDone.add(1, ordering: .releasing)
            }
        }
        while counts.readersDone.load(ordering: .acquiring) < readers.count {
            counts.releasesBegun.add(1, ordering: .sequentiallyConsistent)
            ServiceBox.reset([box], cachedOnly: false)
            counts.releasesDone.add(1, ordering: .sequentiallyConsistent)
        }
        for reader in readers { reader.join() }
        let finishedDuringRead = counts.finishedDuringRead.load(ordering: .relaxed)
        #expect(finishedDuringRead == 0)
        #expect(counts.releasesDone.load(ordering: .relaxed) > 0)
    }

    @Test("a release inside a read of the same service on the same thread leaves it to the box's next release")
    func releaseInsideItsOwnRead() throws {
        let lifetimes = Lifetimes()
        let (box, view) = provider(Tracked.self) { Tracked(lifetimes) }
        // Built first: a read of a service not built yet lends the new instance from outside any read.
        _ = try view.resolve(ServiceKey(Tracked.self))
        let id = try view.withService(ServiceKey(Tracked.self)) { tracked in
            ServiceBox.reset([box], cachedOnly: false)
            #expect(lifetimes.isAlive(tracked.id))
            return tracked.id
        }
        #expect(lifetimes.isAlive(id))
        #expect(try view.resolve(ServiceKey(Tracked.self)).id != id)
        #expect(lifetimes.count == 2)
        ServiceBox.reset([box], cachedOnly: false)
        #expect(lifetimes.count == 0)
    }

    @Test("reads nested deeper than a thread's record names still hold their instances")
    func deeplyNestedReads() throws {
        let lifetimes = Lifetimes()
        let (boxA, viewA) = provider(TrackedA.self) { TrackedA(tracked: Tracked(lifetimes)) }
        let (_, viewB) = provider(TrackedB.self) { TrackedB(tracked: Tracked(lifetimes)) }
        let counts = Counts()
        var writer: OwnThread?
        // Fifteen reads of B, then one of A at the deepest level: only the record's last name, "any", covers it.
        func nest(_ depth: Int) throws {
            guard depth < 15 else {
                try viewA.withService(ServiceKey(TrackedA.self)) { a in
                    writer = OwnThread {
                        counts.releasing.store(true, ordering: .releasing)
                        ServiceBox.reset([boxA], cachedOnly: false)
                        counts.released.store(true, ordering: .releasing)
                    }
                    while !counts.releasing.load(ordering: .acquiring) { sched_yield() }
                    for _ in 0..<10_000 { sched_yield() }
                    let releasedDuringRead = counts.released.load(ordering: .acquiring)
                    #expect(!releasedDuringRead)
                    #expect(lifetimes.isAlive(a.tracked.id))
                }
                return
            }
            try viewB.withService(ServiceKey(TrackedB.self)) { _ in try? nest(depth + 1) }
        }
        try nest(0)
        writer?.join()
        let releasedAfter = counts.released.load(ordering: .acquiring)
        #expect(releasedAfter)
    }
}
