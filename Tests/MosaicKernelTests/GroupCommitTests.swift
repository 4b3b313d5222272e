import Mosaic
import MosaicTesting
import Synchronization
import Testing

@testable import MosaicKernel

/// A store whose first call waits until it is let go, and that records the groups it was given.
private final class HeldStore: Sendable {
    let groups = Locked<[[String]]>([])
    private let entered: AsyncStream<Void>.Continuation
    let enteredFirst: AsyncStream<Void>
    /// The first call, waiting; or whether it was let go already.
    private let gate = Locked<(waiting: CheckedContinuation<Void, Never>?, released: Bool)>((nil, false))

    init() { (enteredFirst, entered) = AsyncStream.makeStream() }

    func store(_ writes: [String]) async throws -> [String] {
        let first = groups.withLock { groups in
            groups.append(writes)
            return groups.count == 1
        }
        if first {
            entered.yield()
            await withCheckedContinuation { continuation in
                let now = gate.withLock { gate in
                    if !gate.released { gate.waiting = continuation }
                    return gate.released
                }
                if now { continuation.resume() }
            }
        }
        if writes.contains("fail") { throw HeldStoreFailure() }
        return writes.map { "stored \($0)" }
    }

    func release() {
        let waiting = gate.withLock { gate in
            gate.released = true
            return gate.waiting
        }
        waiting?.resume()
    }
}

private struct HeldStoreFailure: Error {}

struct GroupCommitTests {
    /// Starts `first` (which the store holds), then `rest`, in order, once `first` is being stored, and waits until
    /// they all wait for the next group; returns every write's outcome once the store is let go.
    private func storeTogether(
        _ first: String, _ rest: [String], limit: Int = 100, weight: @escaping @Sendable (String) -> Int = { _ in 1 },
        row: (@Sendable (String) -> String)? = nil
    ) async -> (outcomes: [String: Result<String, any Error>], groups: [[String]]) {
        let store = HeldStore()
        let commits = GroupCommit<String, String>(limit: limit, weight: weight, row: row) { try await store.store($0) }
        return await withTaskGroup(of: (String, Result<String, any Error>).self) { group in
            let write = { @Sendable (name: String) -> (String, Result<String, any Error>) in
                do { return (name, .success(try await commits.submit(name))) } catch { return (name, .failure(error)) }
            }
            group.addTask { await write(first) }
            for await _ in store.enteredFirst { break }
            // One at a time, each once the one before waits: child tasks start in no set order, and the groups
            // depend on the order the writes arrive in.
            for (index, name) in rest.enumerated() {
                group.addTask { await write(name) }
                while commits.waiting <= index { await Task.yield() }
            }
            store.release()
            var outcomes: [String: Result<String, any Error>] = [:]
            for await (name, outcome) in group { outcomes[name] = outcome }
            return (outcomes, store.groups.withLock { $0 })
        }
    }

    @Test func writesThatArriveWhileAGroupIsStoredShareTheNext() async throws {
        let names = (1...15).map { "w\($0)" }
        let (outcomes, groups) = await storeTogether("w0", names)
        #expect(groups.count == 2)
        #expect(groups.first == ["w0"])
        #expect(Set(groups.last ?? []) == Set(names))
        for name in ["w0"] + names { #expect(try outcomes[name]?.get() == "stored \(name)") }
    }

    @Test func aGroupTakesNoMoreThanItsLimit() async throws {
        let (_, groups) = await storeTogether("a", ["b", "c", "d", "e"], limit: 3)
        #expect(groups.dropFirst().map(\.count) == [3, 1])
    }

    @Test func twoWritesOfOneRowGoToGroupsInTheOrderTheyCame() async throws {
        let (_, groups) = await storeTogether("a", ["b", "c", "b2", "d"], row: { String($0.prefix(1)) })
        // The group stops at b's second write, so nothing after it overtakes it.
        #expect(groups.dropFirst().map { Set($0) } == [["b", "c"], ["b2", "d"]])
    }

    @Test func aWriteHeavierThanTheLimitGoesAlone() async throws {
        let (outcomes, groups) = await storeTogether("a", ["heavy", "b"], limit: 2, weight: { $0.count })
        #expect(groups.count == 3)
        #expect(try outcomes["heavy"]?.get() == "stored heavy")
    }

    /// Submits `first` (which the store holds) and `second` behind it, each with a deadline of 5 s on `clock`,
    /// then moves the clock past both deadlines; each caller's outcome, and the groups stored once the store is let go.
    private func passDeadlines(
        cancellingSecond: Bool = false
    ) async throws -> (first: Result<String, any Error>, second: Result<String, any Error>, groups: [[String]]) {
        let manual = ManualClock()
        let clock = KernelClock(manual)
        let store = HeldStore()
        let commits = GroupCommit<String, String>(limit: 100) { try await store.store($0) }
        let write = { @Sendable (name: String) -> Result<String, any Error> in
            do { return .success(try await commits.submit(name, until: .seconds(5), on: clock)) } catch {
                return .failure(error)
            }
        }
        let first = Task { await write("first") }
        for await _ in store.enteredFirst { break }
        let second = Task { await write("second") }
        while commits.waiting < 1 { await Task.yield() }
        if cancellingSecond {
            second.cancel()
        } else {
            // The watch of both deadlines sleeps until the first.
            await manual.sleepers(reaching: 1)
            manual.advance(by: .seconds(5))
        }
        let secondOutcome = await second.value
        // The caller that stopped waiting left the queue: nothing waits for the next group.
        #expect(commits.waiting == 0)
        if cancellingSecond {
            await manual.sleepers(reaching: 1)
            manual.advance(by: .seconds(5))
        }
        let firstOutcome = await first.value
        store.release()
        // Let the store finish with the held group; a third write shows what the next group holds.
        #expect(try await commits.submit("third") == "stored third")
        return (firstOutcome, secondOutcome, store.groups.withLock { $0 })
    }

    @Test func aWriteWhoseDeadlinePassesWhileItWaitsIsNeverStored() async throws {
        let (first, second, groups) = try await passDeadlines()
        let sentFirst = try #require(first.failure as? Deadline.Exceeded)
        #expect(sentFirst.sent && !sentFirst.cancelled)
        let waitingSecond = try #require(second.failure as? Deadline.Exceeded)
        #expect(!waitingSecond.sent && !waitingSecond.cancelled)
        #expect(groups == [["first"], ["third"]])
    }

    @Test func aCancelledWriteLeavesTheQueueAtOnce() async throws {
        let (_, second, groups) = try await passDeadlines(cancellingSecond: true)
        let cancelled = try #require(second.failure as? Deadline.Exceeded)
        #expect(cancelled.cancelled && !cancelled.sent)
        #expect(groups == [["first"], ["third"]])
    }

    @Test func aWriteFromATaskCancelledBeforeItIsNeverSent() async throws {
        let store = HeldStore()
        let commits = GroupCommit<String, String>(limit: 100) { try await store.store($0) }
        let clock = KernelClock(ManualClock())
        let outcome = await Task { () -> Result<String, any Error> in
            withUnsafeCurrentTask { $0?.cancel() }
            do { return .success(try await commits.submit("late", until: .seconds(5), on: clock)) } catch {
                return .failure(error)
            }
        }.value
        let refused = try #require(outcome.failure as? Deadline.Exceeded)
        #expect(refused.cancelled && !refused.sent)
        #expect(store.groups.withLock { $0 }.isEmpty)
    }

    @Test func aFailedGroupFailsEachOfItsWritesAndNoOther() async throws {
        let (outcomes, groups) = await storeTogether("a", ["b", "fail"])
        #expect(groups.count == 2)
        #expect(try outcomes["a"]?.get() == "stored a")
        for name in ["b", "fail"] {
            #expect(throws: HeldStoreFailure.self) { try outcomes[name]?.get() }
        }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
