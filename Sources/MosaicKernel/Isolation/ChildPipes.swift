internal import Foundation
internal import Synchronization

/// The three pipes of an isolated module's process, and the reading of the host's ends.
///
/// Two things Foundation's `Pipe` and `readabilityHandler` leave to chance, and that lost a crashed child's end
/// under load (the host waited for its standard error to close, for good):
/// - Every end closes on exec, and pipes are made, and children started, one at a time in the process. Otherwise a
///   child started meanwhile inherits another's ends: holding its output open, it hides that child's end from the
///   host for as long as it lives; holding its input, it keeps that child from seeing the host close it.
/// - A host's end is closed only once its read source is cancelled, as libdispatch requires. A `FileHandle` closes
///   its descriptor when released, which can come first; a pipe made then gets the same number, and the events of
///   one of them are lost.
struct ChildPipes {
    /// The child's standard input, output and error: the ends it is given.
    let childEnds: (input: FileHandle, output: FileHandle, error: FileHandle)
    /// The host's end of the child's standard input.
    let input: FileHandle
    private let output: Int32
    private let error: Int32

    /// Held while pipes are made and while a child starts.
    static let spawning = Mutex(())

    /// Three new pipes, every end closing on exec.
    ///
    /// - Throws: ``BoundaryError`` when the process has no descriptors left.
    init() throws {
        let ends = try Self.spawning.withLock { _ in
            var made: [Int32] = []
            for _ in 0..<3 {
                var pair: [Int32] = [-1, -1]
                guard pipe(&pair) == 0 else {
                    let reason = String(cString: strerror(errno))
                    for end in made { close(end) }
                    throw BoundaryError("no pipe could be made for it: \(reason)")
                }
                for end in pair { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                made += pair
            }
            return made
        }
        childEnds = (
            FileHandle(fileDescriptor: ends[0], closeOnDealloc: true),
            FileHandle(fileDescriptor: ends[3], closeOnDealloc: true),
            FileHandle(fileDescriptor: ends[5], closeOnDealloc: true)
        )
        input = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        output = ends[2]
        error = ends[4]
    }

    /// After the child started: closes the host's copies of its ends (which would keep the pipes open after the
    /// child ended) and reads its output and error, each chunk as it comes, then empty data once at the end.
    func start(
        label: String, output received: @escaping @Sendable (Data) -> Void,
        error receivedError: @escaping @Sendable (Data) -> Void
    ) {
        try? childEnds.input.close()
        try? childEnds.output.close()
        try? childEnds.error.close()
        Self.read(output, label: label + ".output", received)
        Self.read(error, label: label + ".error", receivedError)
    }

    /// When the child could not be started: closes the host's ends that no reader took.
    func abandon() {
        close(output)
        close(error)
    }

    private static func read(_ descriptor: Int32, label: String, _ received: @escaping @Sendable (Data) -> Void) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: label))
        // The handler holds the source until its cancellation, which releases the handlers.
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    received(Data(buffer[..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    // Nothing more for now, or the end (0), or an error: only the first waits for the next event.
                    if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
                    source.cancel()
                    return
                }
            }
        }
        source.setCancelHandler {
            close(descriptor)
            received(Data())
        }
        source.resume()
    }
}
