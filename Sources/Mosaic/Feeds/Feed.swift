internal import Synchronization

/// What the kernel delivers to one subscriber, in order: events (``Events/subscribe(to:buffer:)``), shared-state
/// values (``SharedState/values(of:)``), contribution lists (``Contributions/updates(of:)``) and the kernel's own
/// changes.
///
/// ```swift
/// for await change in context.events.subscribe(to: CityChanged.self) { … }
/// ```
/// Iterate a feed in one task at a time: a second task that waits on a feed while another does sees it end at once
/// (subscribe once per task instead). It ends when what it follows ends (the subscribing module deactivates, the
/// kernel shuts down), when the task reading it is cancelled, or when it is dropped; then it delivers nothing more.
///
/// Mosaic's own sequence rather than an `AsyncStream`: waiting for the next element is one lock and one
/// continuation on the subscriber's buffer, so that one event to a thousand subscribers costs the thousand task
/// resumptions and little else (see Benchmarks/README.md, "Events and shared state").
public struct Feed<Element: Sendable>: AsyncSequence, Sendable {
    /// A feed never fails: it ends.
    public typealias Failure = Never

    private let source: (any FeedSource<Element>)?

    /// A feed of what `source` delivers.
    package init(_ source: any FeedSource<Element>) {
        self.source = source
    }

    private init() {
        source = nil
    }

    /// A feed that has ended: it delivers nothing.
    public static var ended: Feed { Feed() }

    /// A feed of `element` alone.
    package static func just(_ element: Element) -> Feed { Feed(Just(element)) }

    /// An iterator reading on where the feed's last reader stopped: a feed's iterators share its elements.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source)
    }

    /// Reads a feed.
    public struct Iterator: AsyncIteratorProtocol {
        /// Reading never fails: the feed ends.
        public typealias Failure = Never

        private let source: (any FeedSource<Element>)?

        fileprivate init(source: (any FeedSource<Element>)?) {
            self.source = source
        }

        /// The next element, waiting for it; `nil` once the feed has ended or the reading task is cancelled.
        public mutating func next() async -> Element? {
            await source?.next(isolation: nil)
        }

        /// The next element, waiting for it on `actor` (a task isolated to an actor does not hop off it).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await source?.next(isolation: actor)
        }
    }
}

/// Where a ``Feed``'s elements come from (a subscriber's buffer in the kernel, for one), read by one task at a time.
package protocol FeedSource<Element>: AnyObject, Sendable {
    associatedtype Element: Sendable
    /// The next element, waiting for it on `actor`; `nil` once the source has ended or the reading task is
    /// cancelled (then it ends).
    func next(isolation actor: isolated (any Actor)?) async -> Element?
}

/// One element, then the end.
private final class Just<Element: Sendable>: FeedSource {
    private let element: Locked<Element?>

    init(_ element: Element) {
        self.element = Locked(element)
    }

    func next(isolation actor: isolated (any Actor)?) async -> Element? {
        element.withLock { $0.take() }
    }
}
