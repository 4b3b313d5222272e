internal import Mosaic
internal import Synchronization

/// The lanes one write (or transaction) holds, released exactly once: by the write when it ends, or, when the write
/// stopped waiting for a storage call that had not answered, by that call when it answers.
final class LaneHold: Sendable {
    private let lanes: [WriteLane]
    /// How many of `lanes` are taken, in order.
    private let taken = Locked(0)
    private let handedOff = Atomic(false)

    /// A hold on `lanes`, taken in the order given by ``acquire(until:on:)``.
    init(_ lanes: WriteLane...) {
        self.lanes = lanes
    }

    init(_ lanes: [WriteLane]) {
        self.lanes = lanes
    }

    /// Takes every lane in order, each waiting at most until `deadline`; on failure the ones taken stay held
    /// until ``release()``.
    func acquire(until deadline: Duration, on clock: KernelClock) async throws {
        for lane in lanes {
            try await lane.acquire(until: deadline, on: clock)
            taken.withLock { $0 += 1 }
        }
    }

    /// From now on a storage call releases the lanes when it answers, not the write.
    func handOff() {
        handedOff.store(true, ordering: .releasing)
    }

    /// Releases the lanes, unless they were handed off (the write's end).
    func release() {
        guard !handedOff.load(ordering: .acquiring) else { return }
        releaseNow()
    }

    /// Releases the lanes taken (a handed-off storage call's answer).
    func releaseNow() {
        let count = taken.withLock { count in
            defer { count = 0 }
            return count
        }
        for lane in lanes.prefix(count) { lane.release() }
    }
}
