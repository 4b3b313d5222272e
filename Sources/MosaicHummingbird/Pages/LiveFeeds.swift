internal import Mosaic
internal import Synchronization

/// One server-sent event of a live page: its regions as JSON, with the page's version.
struct LiveEvent: Sendable {
    /// The regions' version, the event's id.
    let version: String
    /// The whole event, as written to every stream.
    let text: String
}

/// The open streams of the live pages, fed by one render per change: however many clients follow a page, each change
/// of what it shows is rendered and encoded once (Modules' page reads the storage each time) and the same event is
/// handed to every stream of that page.
///
/// A page's renders start with its first stream and stop with its last; a stream that starts while others are open
/// gets the page's latest event at once.
final class LiveFeeds: Sendable {
    private struct Page {
        /// Which start of the page's renders this is, so that an ended one does not touch the next.
        let start: Int
        var renders: Task<Void, Never>?
        var latest: LiveEvent?
        var streams: [Int: AsyncStream<LiveEvent>.Continuation] = [:]
    }

    private struct State {
        var pages: [String: Page] = [:]
        var next = 0
    }

    private let state = Locked(State())

    /// The events of the page at `path`: its latest at once, if it has one, then one whenever `render` (run after
    /// each element of `changes`) gives regions of another version. A slow reader skips to the newest. Ends when
    /// `changes` ends or the reading task is cancelled.
    func events(
        of path: String, changes: @escaping @Sendable () -> Feed<Void>,
        render: @escaping @Sendable () async -> LiveEvent?
    ) -> AsyncStream<LiveEvent> {
        let (events, continuation) = AsyncStream.makeStream(of: LiveEvent.self, bufferingPolicy: .bufferingNewest(1))
        let (stream, start, latest) = state.withLock { state -> (Int, Int?, LiveEvent?) in
            state.next += 1
            var page = state.pages[path] ?? Page(start: state.next)
            let start = page.streams.isEmpty && page.renders == nil ? page.start : nil
            page.streams[state.next] = continuation
            state.pages[path] = page
            return (state.next, start, page.latest)
        }
        if let latest { continuation.yield(latest) }
        continuation.onTermination = { [weak self] _ in self?.close(stream, of: path) }
        if let start {
            let renders = Task {
                for await _ in changes() {
                    guard let event = await render() else { continue }
                    publish(event, on: path, start: start)
                }
                end(path, start: start)
            }
            let stopped = state.withLock { state -> Bool in
                guard state.pages[path]?.start == start else { return true }
                state.pages[path]?.renders = renders
                return false
            }
            if stopped { renders.cancel() }
        }
        return events
    }

    /// Hands `event` to every stream of the page, unless it is the version they have.
    private func publish(_ event: LiveEvent, on path: String, start: Int) {
        let streams = state.withLock { state -> [AsyncStream<LiveEvent>.Continuation] in
            guard var page = state.pages[path], page.start == start, page.latest?.version != event.version else {
                return []
            }
            page.latest = event
            state.pages[path] = page
            return Array(page.streams.values)
        }
        for stream in streams { stream.yield(event) }
    }

    /// The page's renders ended (the kernel shut down): so does every stream of it.
    private func end(_ path: String, start: Int) {
        let streams = state.withLock { state -> [AsyncStream<LiveEvent>.Continuation] in
            guard let page = state.pages[path], page.start == start else { return [] }
            state.pages[path] = nil
            return Array(page.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    /// A stream of the page ended; the last one stops its renders.
    private func close(_ stream: Int, of path: String) {
        let renders = state.withLock { state -> Task<Void, Never>? in
            guard var page = state.pages[path] else { return nil }
            page.streams[stream] = nil
            guard page.streams.isEmpty else {
                state.pages[path] = page
                return nil
            }
            state.pages[path] = nil
            return page.renders
        }
        renders?.cancel()
    }
}
