internal import Mosaic
internal import Synchronization

/// A boundary of a commit where a crash harness may stop the process, to check that nothing is lost or applied
/// twice whichever side of it a crash falls on.
package enum FaultPoint: String, Sendable, CaseIterable {
    /// Inside a storage transaction: its statements ran, and it has not committed.
    case insideCommit = "inside-commit"
    /// The storage transaction committed, and the kernel has not learned of it.
    case afterCommit = "after-commit"
}

/// What a crash harness does at each ``FaultPoint``: nothing unless one installed an action, which costs a commit
/// one atomic load. Only test executables install one.
package enum FaultPoints {
    private static let installed = Atomic<Bool>(false)
    private static let action = Locked<(@Sendable (FaultPoint) -> Void)?>(nil)

    /// Runs `action` at every fault point reached from now on.
    package static func install(_ action: @escaping @Sendable (FaultPoint) -> Void) {
        Self.action.withLock { $0 = action }
        installed.store(true, ordering: .releasing)
    }

    /// The commit under way reached `point`.
    package static func reach(_ point: FaultPoint) {
        guard installed.load(ordering: .acquiring) else { return }
        action.withLock { $0 }?(point)
    }
}
