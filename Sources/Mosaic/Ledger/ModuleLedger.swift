internal import Synchronization

/// Everything the kernel grants one module while it is active, so that it can be taken back as a whole.
///
/// The kernel opens a ledger when a module starts activating and records in it each grant as something to
/// withdraw: its services (built instances released), contributions, link routes, the right to publish events
/// and write shared state, event subscriptions, state and contribution observers, and the tasks it starts with
/// ``ActivationContext/task(_:)``. Withdrawal happens in one place, in two steps:
/// 1. ``quiesce()`` before the module's `deactivate()`: withdraws what lets new work reach the module
///    (``Stage/entry``: routes, contributions), waits for the link handlers and content builds under way, then
///    cancels the module's tasks and waits for them to end.
/// 2. ``withdraw()`` after it: everything else, newest first; from then on the module's old handles refuse to
///    write state or publish, and its feeds have ended.
/// A hub never needs to remember which module holds what.
package final class ModuleLedger: Sendable {
    /// When a grant is taken back.
    package enum Stage: Sendable {
        /// Before `deactivate()` runs: what lets new work reach the module.
        case entry
        /// After `deactivate()` ran (the module may still use these while it shuts down).
        case rest
    }

    private struct State {
        var isOpen = true
        /// Grants by stage, each list in the order held (tokens ascending), so withdrawing needs no sort.
        var entry: [Grant] = []
        var rest: [Grant] = []
        var tasks: [Int: Task<Void, Never>] = [:]
        var next = 0
        /// Told when the last call under way ends, once the ledger refuses calls.
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    /// One grant: its token and how to take it back.
    private struct Grant {
        let token: Int
        let withdraw: @Sendable () -> Void
    }

    /// The module the ledger belongs to.
    package let module: ModuleID
    /// Told once, when the ledger closes, before any grant is taken back: the kernel's event hub, which then stops
    /// the module publishing. (Every module holds that right; as a grant it cost each module a closure and a list.)
    private let closing: (any LedgerClosingObserver)?
    private let state = Locked(State())
    /// The calls into the module's code under way, with ``refusingCalls`` set once it takes no more work (calls,
    /// tasks, grants taken back before `deactivate()`): one word, so that a call (every request through a module's
    /// middleware, from any core) takes no lock.
    private let calls = Atomic<Int>(0)
    private static let refusingCalls = 1 << (Int.bitWidth - 2)

    /// Whether the module still takes work; read under the state's lock, under which ``refuseWork()`` sets it.
    private var acceptsWork: Bool { calls.load(ordering: .relaxed) & Self.refusingCalls == 0 }

    /// From now on the module takes no work: no call begins and no task starts. Called under the state's lock.
    private func refuseWork() { calls.bitwiseOr(Self.refusingCalls, ordering: .relaxed) }

    package init(module: ModuleID, closing: (any LedgerClosingObserver)? = nil) {
        self.module = module
        self.closing = closing
    }

    /// Whether the module still holds its grants (it is activating, active or deactivating).
    package var isOpen: Bool { state.withLock { $0.isOpen } }

    /// How many grants the ledger holds now (tasks apart).
    package var holdingCount: Int { state.withLock { $0.entry.count + $0.rest.count } }

    /// Records `withdraw` to run at `stage`; runs it at once when that stage has passed. Returns a token for
    /// ``release(_:)`` when the grant ends on its own first.
    @discardableResult
    package func hold(_ stage: Stage = .rest, _ withdraw: @escaping @Sendable () -> Void) -> Int? {
        let token: Int? = state.withLock { state in
            guard state.isOpen, stage == .rest || acceptsWork else { return nil }
            defer { state.next += 1 }
            switch stage {
            case .entry: state.entry.append(Grant(token: state.next, withdraw: withdraw))
            case .rest: state.rest.append(Grant(token: state.next, withdraw: withdraw))
            }
            return state.next
        }
        if token == nil { withdraw() }
        return token
    }

    /// Forgets a grant that ended on its own (a feed its reader stopped).
    package func release(_ token: Int) {
        state.withLock { state in
            Self.remove(token, from: &state.entry)
            Self.remove(token, from: &state.rest)
        }
    }

    /// Removes the grant with `token` from `grants` (ordered by token), if it is there.
    private static func remove(_ token: Int, from grants: inout [Grant]) {
        var low = 0
        var high = grants.count
        while low < high {
            let middle = (low + high) / 2
            if grants[middle].token < token { low = middle + 1 } else { high = middle }
        }
        if low < grants.count, grants[low].token == token { grants.remove(at: low) }
    }

    /// Starts `operation` as work of the module, cancelled and awaited when the module deactivates; `false` when
    /// the module is already on its way out (nothing starts then).
    package func task(_ operation: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard acceptsWork else { return false }
            let token = state.next
            state.next += 1
            state.tasks[token] = Task { [weak self] in
                await operation()
                self?.taskEnded(token)
            }
            return true
        }
    }

    private func taskEnded(_ token: Int) {
        _ = state.withLock { $0.tasks.removeValue(forKey: token) }
    }

    /// Begins a call into the module's code from outside (a link handler, a content build); `false` once the
    /// module is on its way out. Every `true` must be followed by ``endCall()``.
    package func beginCall() -> Bool {
        var seen = calls.load(ordering: .relaxed)
        while seen & Self.refusingCalls == 0 {
            let (began, now) = calls.compareExchange(expected: seen, desired: seen + 1, ordering: .acquiring)
            if began { return true }
            seen = now
        }
        return false
    }

    /// Ends a call begun with ``beginCall()``.
    package func endCall() {
        // Releasing, so that what the call did happens before `quiesce()` goes on; acquiring too, so that the last
        // call, which resumes it, carries what the calls that ended before it did.
        guard calls.subtract(1, ordering: .acquiringAndReleasing).newValue == Self.refusingCalls else { return }
        // The last call of a module on its way out: `quiesce()` waits for it, or will see it ended.
        let waiting = state.withLock { state in
            defer { state.drained = [] }
            return state.drained
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Step 1 of withdrawal: takes back routes and contributions, waits for the calls under way, then cancels the
    /// module's tasks and waits for them to end.
    package func quiesce() async {
        let entry = state.withLock { state in
            refuseWork()
            defer { state.entry = [] }
            return state.entry
        }
        for grant in entry.reversed() { grant.withdraw() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Under the lock, so that a last call ending after this read finds the continuation (`endCall()`).
            let idle = state.withLock { state in
                if calls.load(ordering: .acquiring) == Self.refusingCalls { return true }
                state.drained.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
        let tasks = state.withLock { Array($0.tasks.values) }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Step 2 of withdrawal: closes the ledger and takes back everything still held, newest first. Tasks still
    /// running (when ``quiesce()`` was skipped because the module failed or the kernel was dropped) are cancelled.
    package func withdraw() {
        // The lists are taken whole and walked backwards: no copy of them is made.
        let (wasOpen, entry, rest, tasks) = state.withLock { state in
            let wasOpen = state.isOpen
            state.isOpen = false
            refuseWork()
            defer {
                state.entry = []
                state.rest = []
                state.tasks = [:]
            }
            return (wasOpen, state.entry, state.rest, state.tasks)
        }
        if wasOpen { closing?.ledgerClosed(of: module) }
        for grant in entry.reversed() { grant.withdraw() }
        for grant in rest.reversed() { grant.withdraw() }
        for task in tasks.values { task.cancel() }
    }
}

/// Told when a module's ledger closes (see ``ModuleLedger/init(module:closing:)``).
package protocol LedgerClosingObserver: AnyObject, Sendable {
    /// `module`'s ledger closed: the module holds nothing from now on.
    func ledgerClosed(of module: ModuleID)
}
