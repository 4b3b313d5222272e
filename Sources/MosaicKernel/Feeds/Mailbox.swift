internal import Mosaic
internal import Synchronization

/// One subscriber's share of a ``Broadcast``: the elements sent to it that its reader has not taken yet, and the
/// reader waiting for the next one.
///
/// Not generic on purpose: a send hands every mailbox the same reference (its element boxed once), so fanning out
/// to many subscribers runs code compiled for that one type and never asks the Swift runtime for the metadata of a
/// generic type, as yielding to an `AsyncStream<Output>` continuation per subscriber did.
final class Mailbox: Sendable {
    /// An element as mailboxes carry it: a reference, shared by every subscriber of one send.
    typealias Parcel = any AnyObject & Sendable

    /// How much a mailbox keeps for a reader that falls behind.
    enum Buffering: Sendable {
        /// Everything.
        case unbounded
        /// The newest `count` elements (at least one): when full, the oldest waiting one is dropped to make room.
        case newest(Int)
    }

    /// What became of an element offered to a mailbox.
    enum Outcome: Sendable {
        /// Handed to the waiting reader or kept; `depth` elements now wait (0 when the reader took it at once).
        case kept(depth: Int)
        /// Kept, and the oldest waiting element was dropped to make room (the buffer is full).
        case droppedOldest
    }

    private struct State {
        /// The waiting elements, oldest first, from `head` on; taken slots are `nil` until the array is compacted.
        var pending: [Parcel?] = []
        var head = 0
        /// The reader, suspended until the next element or the end.
        var reader: UnsafeContinuation<Parcel?, Never>?
        /// No more elements will come; the reader takes what waits, then sees the end.
        var isFinished = false

        var count: Int { pending.count - head }

        /// What the reader gets without waiting: the oldest element, or `nil` at the end; `nil` while it must wait.
        mutating func take() -> Parcel?? {
            if let element = removeFirst() { return .some(element) }
            return isFinished ? .some(nil) : nil
        }

        mutating func removeFirst() -> Parcel? {
            guard head < pending.count else { return nil }
            let element = pending[head]
            pending[head] = nil
            head += 1
            if head == pending.count {
                pending.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 32, head * 2 >= pending.count {
                pending.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private let state = Locked(State())
    private let capacity: Int
    /// Which elements the reader wants (`nil`: all); the others are never kept, so they take no room.
    private let accepts: (@Sendable (Parcel) -> Bool)?
    /// Learns what became of each element offered (for the kernel's metrics).
    private let observe: (@Sendable (Outcome) -> Void)?
    /// Fires when the mailbox ends (finished or cancelled).
    let ended = EndHook()

    /// A mailbox keeping what `buffering` says of the elements `accepts` takes, holding `first` (when given and
    /// taken) for its reader.
    init(
        buffering: Buffering, first: Parcel? = nil, accepts: (@Sendable (Parcel) -> Bool)? = nil,
        observe: (@Sendable (Outcome) -> Void)? = nil
    ) {
        switch buffering {
        case .unbounded: capacity = .max
        case .newest(let count): capacity = max(1, count)
        }
        self.accepts = accepts
        self.observe = observe
        if let first, accepts?(first) != false { state.withLock { $0.pending.append(first) } }
    }

    /// Hands `element` to the waiting reader, or keeps it (dropping the oldest waiting one when full). Never waits;
    /// an element offered after the end, or one the reader does not want, is ignored.
    func offer(_ element: Parcel) {
        if let accepts, !accepts(element) { return }
        let (reader, outcome) = state.withLock { state -> (UnsafeContinuation<Parcel?, Never>?, Outcome?) in
            guard !state.isFinished else { return (nil, nil) }
            if let reader = state.reader {
                state.reader = nil
                return (reader, .kept(depth: 0))
            }
            if state.count >= capacity {
                _ = state.removeFirst()
                state.pending.append(element)
                return (nil, .droppedOldest)
            }
            state.pending.append(element)
            return (nil, .kept(depth: state.count))
        }
        reader?.resume(returning: element)
        if let outcome { observe?(outcome) }
    }

    /// The oldest waiting element without waiting: `.some(nil)` once the mailbox has ended and is empty, `nil`
    /// when the reader must ``wait(_:)``.
    func take() -> Parcel?? {
        state.withLock { $0.take() }
    }

    /// Resumes `reader` with the oldest waiting element (`nil` once the mailbox has ended and is empty), now or
    /// when one comes. One reader at a time: a second reader, while one waits, is resumed with `nil` at once (its
    /// loop ends, and the first reader keeps the feed) instead of stopping the process for a mistake in module code.
    func wait(_ reader: UnsafeContinuation<Parcel?, Never>) {
        let ready = state.withLock { state -> Parcel?? in
            if let ready = state.take() { return ready }
            if state.reader != nil { return .some(nil) }
            state.reader = reader
            return nil
        }
        if let ready { reader.resume(returning: ready) }
    }

    /// Ends the mailbox: its reader takes what waits, then sees the end.
    func finish() {
        let reader = state.withLock { state in
            state.isFinished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
        ended.fire()
    }

    /// Ends the mailbox now, dropping what waits: its reader stopped listening.
    func cancel() {
        let (reader, dropped) = state.withLock { state in
            state.isFinished = true
            defer {
                state.reader = nil
                state.pending = []
                state.head = 0
            }
            return (state.reader, state.pending)
        }
        reader?.resume(returning: nil)
        ended.fire()
        _ = dropped  // released here, outside the lock
    }
}
