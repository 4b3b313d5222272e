internal import Dispatch
internal import Foundation
internal import GRDB
internal import Mosaic
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The embedded database's file, `state.sqlite` in the state directory, opened once, on a dispatch thread, by the
/// first call that needs it; a failed open is tried again by the next.
///
/// Opening also takes `state.lock` beside it (an advisory `flock`, dropped with the process): the process holding it
/// owns the outbox, so that it may hand back at once the claims a crashed process left. Another process may still
/// open the database (an operator's `sqlite3`, a backup), and its writes wait for the lock or are detected by the
/// rows' revisions; only its claims of durable events are refused.
final class DatabaseFile: Sendable {
    /// The open database, and whether this process owns the directory's outbox.
    struct Opened: Sendable {
        let queue: DatabaseQueue
        let ownsOutbox: Bool
    }

    let directory: String
    let path: String
    private let busyMode: Database.BusyMode
    /// Runs once the database is open and its schema current, before anyone is told (on the opening thread).
    private let prepare: @Sendable (Database, _ ownsOutbox: Bool) throws -> Void
    /// The open database, or its opening under way.
    private let opening = Locked<Task<Opened, any Error>?>(nil)
    /// The open database, stored under this lock by the thread that opened it before anyone is told, and read under
    /// it by every caller: a hand-off the thread sanitizer sees (through `task.value` alone it saw none).
    private let opened = Locked<Opened?>(nil)
    /// The lock file's descriptor while held; closed (releasing the lock) when the database is dropped. Once let
    /// go (`released`), never taken again: an open that finishes after the kernel shut down must not take the
    /// outbox from the kernel that follows.
    private let lock = Locked<(descriptor: Int32?, released: Bool)>((nil, false))

    init(
        directory: String, busyMode: Database.BusyMode,
        prepare: @escaping @Sendable (Database, _ ownsOutbox: Bool) throws -> Void
    ) {
        self.directory = directory
        self.busyMode = busyMode
        self.prepare = prepare
        path = URL(fileURLWithPath: directory).appendingPathComponent("state.sqlite").path
    }

    deinit {
        if let descriptor = lock.withLock({ $0.descriptor }) { close(descriptor) }
    }

    /// The open database, opening it the first time.
    func database() async throws -> Opened {
        if let opened = opened.withLock({ $0 }) { return opened }
        let task = opening.withLock { opening in
            if let task = opening { return task }
            let task = Task {
                try await withCheckedThrowingContinuation { continuation in
                    // A queue of its own (a thread that may block), not the global one, which few threads serve.
                    DispatchQueue(label: "mosaic.state-database.open").async {
                        let result = Result { try self.openNow() }
                        if case .success(let opened) = result { self.opened.withLock { $0 = opened } }
                        continuation.resume(with: result)
                    }
                }
            }
            opening = task
            return task
        }
        do {
            let opened = try await task.value
            return self.opened.withLock { $0 } ?? opened
        } catch {
            opening.withLock { if $0 == task { $0 = nil } }
            throw StateError(
                .unavailable,
                "The state database \(path) cannot be opened (\(error)). Check that the directory is writable; move "
                    + "a damaged state.sqlite aside.")
        }
    }

    /// The open database's queue.
    func queue() async throws -> DatabaseQueue { try await database().queue }

    private func openNow() throws -> Opened {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ownsOutbox = takeLock()
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = busyMode
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try EmbeddedSchema.migrate(db)
            try prepare(db, ownsOutbox)
        }
        return Opened(queue: queue, ownsOutbox: ownsOutbox)
    }

    /// Lets `state.lock` go: the kernel shut down, and another may own the outbox.
    func releaseLock() {
        if let descriptor = lock.withLock({ lock in
            defer { lock = (nil, true) }
            return lock.descriptor
        }) {
            close(descriptor)
        }
    }

    /// Takes `state.lock` for this process, unless another holds it or it was let go: `true` once held.
    private func takeLock() -> Bool {
        let held = lock.withLock { $0 }
        if held.descriptor != nil { return true }
        guard !held.released else { return false }
        let descriptor = open(directory + "/state.lock", O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0 else { return false }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return false
        }
        let kept = lock.withLock { lock in
            guard !lock.released else { return false }
            lock.descriptor = descriptor
            return true
        }
        if !kept { close(descriptor) }
        return kept
    }
}
