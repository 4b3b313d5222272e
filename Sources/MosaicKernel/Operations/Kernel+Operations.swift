/// The slot the kernel's changing operations take turns for, and those waiting for it.
struct OperationLine {
    /// Whether an operation holds the slot.
    var busy = false
    /// The operations waiting for the slot, first come first served.
    var waiting: [(ticket: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    var nextTicket = 0
}

/// The kernel's changing operations (boot, install, grant, shutdown…) take turns: one at a time, in call order.
extension Kernel {
    /// Runs `body` when no other changing operation is under way; operations run in call order, each handing the
    /// slot straight to the next. A caller cancelled while it waits leaves the queue and gets
    /// ``KernelError/Code-swift.struct/cancelled``; once started, an operation runs to its end.
    func exclusively<Result>(_ body: () async throws(KernelError) -> Result) async throws(KernelError) -> Result {
        guard await acquire(cancellable: true) else {
            throw KernelError(
                .cancelled, "The operation was cancelled while it waited for the ones before it; nothing changed.")
        }
        defer { handOff() }
        return try await body()
    }

    /// Like ``exclusively(_:)``, but waits for its turn even when cancelled (for ``shutdown()``).
    func exclusivelyEvenIfCancelled(_ body: () async -> Void) async {
        _ = await acquire(cancellable: false)
        defer { handOff() }
        await body()
    }

    /// Takes the slot, waiting in line for it; `false` when cancelled first.
    fileprivate func acquire(cancellable: Bool) async -> Bool {
        if !operations.busy {
            operations.busy = true
            return true
        }
        if cancellable, Task.isCancelled { return false }
        let ticket = operations.nextTicket
        operations.nextTicket += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { operations.waiting.append((ticket, $0)) }
        } onCancel: {
            if cancellable { Task { await self.leaveLine(ticket) } }
        }
    }

    /// Gives the slot to the first in line, or frees it.
    fileprivate func handOff() {
        if operations.waiting.isEmpty {
            operations.busy = false
        } else {
            operations.waiting.removeFirst().continuation.resume(returning: true)
        }
    }

    /// A waiting caller was cancelled: it gives up its place.
    fileprivate func leaveLine(_ ticket: Int) {
        guard let position = operations.waiting.firstIndex(where: { $0.ticket == ticket }) else { return }
        operations.waiting.remove(at: position).continuation.resume(returning: false)
    }

    /// How many operations wait for the slot (for tests of the order).
    package var waitingOperationCount: Int { operations.waiting.count }
}
