public import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Where one registered service lives at run time: its factory, its scope, whether its module is active, and its
/// instance once built. The kernel makes one per registration; ``Services`` reads them without a lock.
// SAFETY: every stored property here is immutable, atomic or behind a lock (`@unchecked` only because the class is
// open to its one subclass, which argues its own state below).
@usableFromInline
package class AnyServiceBox: @unchecked Sendable {
    @usableFromInline package let key: AnyServiceKey
    @usableFromInline package let scope: ServiceScope
    @usableFromInline package let provider: ModuleID
    @usableFromInline let active = Atomic<Bool>(false)
    /// The address of the built instance, or 0; see ``ServiceBox`` for why reading it is safe.
    @usableFromInline let published = Atomic<UInt>(0)
    /// How many readers may be between loading ``published`` and taking their own copy of the instance; a
    /// release waits until there are none before it frees the instance.
    @usableFromInline let readers = Atomic<Int>(0)
    /// The address of the built instance (0: none), owned by the box and changed only under this lock. It lives
    /// here, not in the generic subclass, so that making, locking and freeing a box asks the runtime for no generic
    /// metadata.
    let storage = Mutex<UInt>(0)

    init(key: AnyServiceKey, scope: ServiceScope, provider: ModuleID) {
        self.key = key
        self.scope = scope
        self.provider = provider
    }

    /// Makes the service resolvable (its module is active).
    package func activate() { active.store(true, ordering: .sequentiallyConsistent) }

    /// Makes resolving fail with ``ServiceError/Code-swift.struct/providerInactive`` and releases the instance.
    package func deactivate() {
        active.store(false, ordering: .sequentiallyConsistent)
        reset(cachedOnly: false)
    }

    /// Releases the built instance (only of `.cached` services when `cachedOnly`), so the next use builds anew.
    package func reset(cachedOnly: Bool) {}

    /// Builds the service now, so that a factory that throws fails its module at activation rather than a reader
    /// later: singletons and cached services are kept, a transient instance is built once and dropped.
    package func prebuild(_ table: ServiceTable) throws(ServiceError) {}

    /// Counts the caller as a reader, so that no release frees the instance meanwhile, and returns the built
    /// instance's address when the service is active and built (else 0); ``endRead()`` follows every call, once
    /// the caller has copied or borrowed the instance. Lives in the non-generic base so that the hot path reads it
    /// at a fixed offset, with no closure and no generic type to look up.
    @inlinable
    package final func beginRead() -> UInt {
        readers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let address = published.load(ordering: .sequentiallyConsistent)
        return address != 0 && active.load(ordering: .relaxed) ? address : 0
    }

    /// Ends a read begun with ``beginRead()``.
    @inlinable
    package final func endRead() {
        readers.wrappingSubtract(1, ordering: .releasing)
    }

    /// A copy of the instance of type `T` at `address`, from ``beginRead()``; only while counted as a reader.
    ///
    /// A static of this non-generic class, so that code not specialized for `T` reads it with no lookup of
    /// generic metadata (a static of `ServiceBox<T>` would first ask the runtime for `ServiceBox<T>`).
    @inlinable @inline(__always)
    package static func instance<T>(at address: UInt, as _: T.Type) -> T {
        UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped.assumingMemoryBound(to: T.self).pointee
    }

    /// Runs `body` with the instance of type `T` at `address`, lent in place rather than copied; only while
    /// counted as a reader.
    @inlinable @inline(__always)
    package static func withInstance<T, R>(at address: UInt, as _: T.Type, _ body: (T) -> R) -> R {
        body(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped.assumingMemoryBound(to: T.self).pointee)
    }

    /// Waits until no reader can still hold an address loaded before ``published`` was cleared.
    func waitForReaders() {
        while readers.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
    }

    @usableFromInline
    func inactive() -> ServiceError {
        ServiceError(
            .providerInactive, service: key.name, provider: provider,
            message: "\(key.name) is provided by \(provider), which is not active now; it comes back when "
                + "\(provider) is activated again.")
    }
}

/// The box of a service of type `T`.
//
// The built instance lives in memory allocated for it alone and never written once initialized (not in a generic
// class, whose metadata the runtime would look up per service type); `storage` (under its lock) owns it and
// `published` is its address for readers. `published` changes only inside the lock, and the instance is fully
// built before its address is stored, which readers load with sequentially consistent ordering after counting
// themselves in `readers`. A release clears `published` first (also sequentially consistent), then waits for
// `readers` to reach zero before it frees the instance: a reader either counted itself before the clear, and the
// release waits for it, or it loads the cleared address and takes the slow path. `factory` is an immutable
// `@Sendable` closure.
// SAFETY: hence a reader that loads a non-zero `published` always reads a live, fully built, unchanging instance.
@usableFromInline
package final class ServiceBox<T: Sendable>: AnyServiceBox, @unchecked Sendable {
    private let factory: @Sendable (ServiceTable) throws -> T

    package init(
        key: AnyServiceKey, scope: ServiceScope, provider: ModuleID,
        factory: @escaping @Sendable (ServiceTable) throws -> T
    ) {
        self.factory = factory
        super.init(key: key, scope: scope, provider: provider)
    }

    deinit {
        // No reader is left: readers reach a box only through a table that keeps it alive.
        Self.free(storage.withLock { $0 })
    }

    /// The service: a new instance when transient, otherwise the one built on first use.
    @inlinable
    package func get(from table: ServiceTable) throws(ServiceError) -> T {
        guard active.load(ordering: .acquiring) else { throw table.failed(inactive(), by: provider) }
        if case .transient = scope { return try build(table) }
        let address = beginRead()
        if address != 0 {
            defer { endRead() }
            return AnyServiceBox.instance(at: address, as: T.self)
        }
        endRead()
        return try publish(table)
    }

    /// Builds the instance once, under the lock; inside `withOverrides` it is built fresh and not kept, so a test's
    /// mocks never leak into the kernel's singletons.
    @usableFromInline
    func publish(_ table: ServiceTable) throws(ServiceError) -> T {
        if OverrideScope.areActive, OverrideScope.current != nil { return try build(table) }
        return try storage.withLock { address throws(ServiceError) -> T in
            if address != 0 { return AnyServiceBox.instance(at: address, as: T.self) }
            // Checked again under the lock: a deactivation that cleared the instance must not see a new one appear.
            guard active.load(ordering: .sequentiallyConsistent) else { throw inactive() }
            let built = try build(table)
            let memory = UnsafeMutablePointer<T>.allocate(capacity: 1)
            memory.initialize(to: built)
            address = UInt(bitPattern: memory)
            published.store(address, ordering: .sequentiallyConsistent)
            return built
        }
    }

    /// Ends and frees the instance the box owns at `address` (nothing at 0).
    private static func free(_ address: UInt) {
        guard let memory = UnsafeMutablePointer<T>(bitPattern: address) else { return }
        memory.deinitialize(count: 1)
        memory.deallocate()
    }

    @usableFromInline
    func build(_ table: ServiceTable) throws(ServiceError) -> T {
        guard let observer = table.observer else { return try make(table) }
        return try observer.build(key, provider: provider) { () throws(ServiceError) -> T in try make(table) }
    }

    private func make(_ table: ServiceTable) throws(ServiceError) -> T {
        do {
            return try factory(table)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(
                .factoryFailed, service: key.name, provider: provider,
                message: "the factory of \(key.name) in \(provider) threw: \(error)", underlying: error)
        }
    }

    package override func prebuild(_ table: ServiceTable) throws(ServiceError) {
        if case .transient = scope {
            _ = try build(table)
        } else {
            _ = try get(from: table)
        }
    }

    package override func reset(cachedOnly: Bool) {
        guard scope == .cached || (!cachedOnly && scope == .singleton) else { return }
        let dropped = storage.withLock { address -> UInt in
            published.store(0, ordering: .sequentiallyConsistent)
            defer { address = 0 }
            return address
        }
        guard dropped != 0 else { return }
        // A reader that loaded the old address a moment ago may still be reading it: free it only after.
        waitForReaders()
        Self.free(dropped)
    }
}
