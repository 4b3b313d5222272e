#if MOSAIC_TSAN
    #if canImport(Glibc)
        import Glibc
    #else
        import Darwin
    #endif

    /// Thread-sanitizer builds (`-Xswiftc -DMOSAIC_TSAN`, Scripts/thread-sanitizer/run.sh): a lock on a pthread mutex,
    /// whose lock and unlock the sanitizer intercepts. `Synchronization.Mutex` locks with futex calls it does not see, so
    /// every access in a `withLock` body looked unsynchronized and had to be suppressed, a real race there with it.
    // `value` is read and written only inside `withLock`, between `pthread_mutex_lock` and `pthread_mutex_unlock` of
    // `mutex`, which `init` makes and `deinit` destroys; the body gets the value `inout sending` and returns a
    // `sending` result, the same terms as `Mutex.withLock`.
    // SAFETY: so every access to `value` holds the mutex, and nothing non-Sendable leaves the lock still shared.
    package final class Locked<Value>: @unchecked Sendable {
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let value: UnsafeMutablePointer<Value>

        /// A lock around `initialValue`.
        package init(_ initialValue: consuming sending Value) {
            mutex = .allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
            value = .allocate(capacity: 1)
            value.initialize(to: initialValue)
        }

        deinit {
            value.deinitialize(count: 1)
            value.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Runs `body` with the value while holding the lock.
        package func withLock<Result, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
#else
    package import Synchronization

    /// The lock every mutable state of Mosaic's shares is kept under: `Synchronization.Mutex`, but for
    /// thread-sanitizer builds, which get a pthread mutex the sanitizer sees (the `MOSAIC_TSAN` branch above).
    package typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
