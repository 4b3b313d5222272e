import Synchronization

/// The same fan-out without Mosaic, in the same run: one value to 1,000 tasks, each waiting for it, (1) through an
/// `AsyncStream` continuation per task, as the kernel did before it had mailboxes; (2) through
/// `AsyncStream(unfolding:)` over a one-value slot per task, the shape the kernel's streams have now; and (3) through
/// a bare continuation per task, no `AsyncStream` at all: the cost of resuming 1,000 tasks, a floor for any
/// fan-out whose subscribers are tasks; and (4) the same with each wait inside a cancellation handler, as a `Feed`'s
/// is.
func runFanOutFloors() async {
    print("  without Mosaic, the same fan-out to 1,000 tasks (µs until all have it, median of 50):")
    let continuations = Mutex<[AsyncStream<Int>.Continuation]>([])
    let streams = await fanOut(
        observers: 1_000,
        subscribe: {
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
            continuations.withLock { $0.append(continuation) }
            return stream
        },
        trigger: { round in continuations.withLock { for continuation in $0 { continuation.yield(round) } } })
    continuations.withLock { for continuation in $0 { continuation.finish() } }
    print("    AsyncStream.makeStream per task, a yield to each:     \(format(streams.delivered, places: 1))")

    let unfolding = Slots()
    let unfolded = await fanOut(
        observers: 1_000, subscribe: { unfolding.makeStream() }, trigger: { unfolding.offer($0) })
    unfolding.offer(-1)
    print("    AsyncStream(unfolding:) over a slot per task:         \(format(unfolded.delivered, places: 1))")

    let resumed = await slotFanOut { await $0.next() }
    print("    a bare continuation per task (no AsyncStream):        \(format(resumed.delivered, places: 1))")

    let handled = await slotFanOut { slot in
        await withTaskCancellationHandler(operation: { await slot.next() }, onCancel: {})
    }
    print("    the same, each wait with a cancellation handler:      \(format(handled.delivered, places: 1))")
}

/// The fan-out to 1,000 tasks that each take values from a slot of their own with `wait`, until a negative one.
private func slotFanOut(_ wait: @escaping @Sendable (Slot) async -> Int) async -> FanOutTimings {
    let slots = Slots()
    let timings = await fanOut(
        observers: 1_000,
        spawn: { received in
            let slot = slots.add()
            Task {
                while await wait(slot) >= 0 { received() }
            }
        }, trigger: { slots.offer($0) })
    slots.offer(-1)
    return timings
}

/// One value for one waiting task, for the rows without Mosaic: at most one value kept, and one task waiting.
final class Slot: Sendable {
    private let state = Mutex<(value: Int?, waiter: UnsafeContinuation<Int, Never>?)>((nil, nil))

    /// Hands `value` to the waiting task, or keeps it (replacing a value not yet taken).
    func offer(_ value: Int) {
        let waiter = state.withLock { state -> UnsafeContinuation<Int, Never>? in
            guard let waiter = state.waiter else {
                state.value = value
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: value)
    }

    /// The kept value, or the next one offered.
    func next() async -> Int {
        if let value = state.withLock({ $0.value.take() }) { return value }
        return await withUnsafeContinuation { waiter in
            let value = state.withLock { state -> Int? in
                guard let value = state.value.take() else {
                    state.waiter = waiter
                    return nil
                }
                return value
            }
            if let value { waiter.resume(returning: value) }
        }
    }
}

/// A slot per task.
final class Slots: Sendable {
    private let slots = Mutex<[Slot]>([])

    func add() -> Slot {
        let slot = Slot()
        slots.withLock { $0.append(slot) }
        return slot
    }

    /// A stream of the values a new slot gets, until a negative one.
    func makeStream() -> AsyncStream<Int> {
        let slot = add()
        return AsyncStream(
            unfolding: {
                let value = await slot.next()
                return value >= 0 ? value : nil
            }, onCancel: {})
    }

    /// Offers `value` to every slot.
    func offer(_ value: Int) {
        slots.withLock { for slot in $0 { slot.offer(value) } }
    }
}
