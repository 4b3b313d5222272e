public import CMosaicReaders
public import Synchronization

/// A service's factory: builds an instance of `T`, resolving its dependencies from the table. The registrar makes one
/// per registration, where the types are known. A box keeps it as an object of no named type, so no box is generic
/// over `T`, and a resolve, which names `T`, calls it straight into its result. Being generic, it costs the runtime one
/// metadata instantiation per service type in a process, and code not specialized for `T` a metadata lookup when it
/// makes one: paid per registration, so that a resolve specialized for `T` pays nothing for it.
@usableFromInline
package final class ServiceMaker<T>: Sendable {
    @usableFromInline let build: @Sendable (_ table: ServiceTable) throws -> T

    @inlinable
    package init(_ build: @escaping @Sendable (_ table: ServiceTable) throws -> T) { self.build = build }
}

/// Where one registered service lives at run time: its factory, its scope, whether its module is active, and its
/// instance once built. The kernel makes one per registration; ``Services`` reads them without a lock.
///
/// Not generic over the service's type: reading and freeing a box then asks the runtime for no generic metadata (code
/// not specialized for a type would look up `ServiceBox<T>` on every use). Whoever reads an instance names its type,
/// which the table's key guarantees is the box's ``type``.
//
// The built instance lives in memory allocated for it alone and never written once initialized; `storage` (under
// its lock) owns it and `published` is its address for readers. `published` changes only inside the lock, and the
// instance is fully built before its address is stored. A reader names the box in its thread's read record
// (CMosaicReaders) before it loads `published`, and clears the name once done with the instance. A release clears
// `published` first, then waits until no thread that began reading the box before is still reading it, and only
// then frees the instance: a reader either named the box before the release's wait, which then waits for it, or it
// loads the cleared address and takes the slow path. `make` is an immutable `ServiceMaker` (Sendable) and `type`
// an immutable metatype.
// SAFETY: hence a reader that loads a non-zero `published` always reads a live, fully built, unchanging instance,
// and every other stored property is immutable, atomic or behind the lock.
@usableFromInline
package final class ServiceBox: @unchecked Sendable {
    @usableFromInline package let key: AnyServiceKey
    @usableFromInline package let scope: ServiceScope
    /// Whether ``scope`` is transient: such a box never holds an instance, so a resolve goes straight to its factory
    /// without beginning a read.
    @usableFromInline package let isTransient: Bool
    @usableFromInline package let provider: ModuleID
    /// The service's type: what ``make`` builds and what ``free(_:)`` ends.
    let type: any Any.Type
    /// A `ServiceMaker<T>` of the service's type `T` (``ServiceRegistration``'s generic initializer ties the two):
    /// whoever builds names `T`, which the table's key guarantees.
    @usableFromInline let make: any AnyObject & Sendable
    @usableFromInline let active = Atomic<Bool>(false)
    /// The address of the built instance, or 0.
    @usableFromInline let published = Atomic<UInt>(0)
    /// The built instance's address, owned by the box, and the first build under way: changed only under this lock.
    let storage = Locked<ServiceSlot>(ServiceSlot())

    package init(
        key: AnyServiceKey, scope: ServiceScope, provider: ModuleID, type: any Any.Type, make: any AnyObject & Sendable
    ) {
        self.key = key
        self.scope = scope
        if case .transient = scope { isTransient = true } else { isTransient = false }
        self.provider = provider
        self.type = type
        self.make = make
    }

    deinit {
        // No reader is left: readers reach a box only through a table that keeps it alive.
        free(storage.withLock { $0.address })
    }

    /// Makes the service resolvable (its module is active).
    package func activate() { active.store(true, ordering: .sequentiallyConsistent) }

    /// Makes resolving fail with ``ServiceError/Code-swift.struct/providerInactive`` and releases the instances of
    /// `boxes` (one module's), waiting once for their readers.
    package static func deactivate(_ boxes: [ServiceBox]) {
        for box in boxes { box.active.store(false, ordering: .sequentiallyConsistent) }
        reset(boxes, cachedOnly: false)
    }

    /// Begins a read: no release frees the instance until ``endRead()``, which follows every call once the caller
    /// has copied or borrowed the instance. Returns the built instance's address when the service is active and
    /// built (else 0). Writes only to the calling thread's own read record: readers on several threads write no
    /// cache line in common.
    @inlinable @inline(__always)
    package func beginRead() -> UInt {
        mosaic_read_begin(UInt(bitPattern: ObjectIdentifier(self)))
        // Sequentially consistent, as the name's store and a release's clearing store and load of names are.
        let address = published.load(ordering: .sequentiallyConsistent)
        return address != 0 && active.load(ordering: .relaxed) ? address : 0
    }

    /// Ends a read begun with ``beginRead()``.
    @inlinable @inline(__always)
    package func endRead() {
        mosaic_read_end()
    }

    /// A copy of the instance of type `T` at `address`, from ``beginRead()``; only inside that read.
    @inlinable @inline(__always)
    package static func instance<T>(at address: UInt, as _: T.Type) -> T {
        UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped.assumingMemoryBound(to: T.self).pointee
    }

    /// Runs `body` with the instance of type `T` at `address`, lent in place rather than copied; only inside
    /// that read.
    @inlinable @inline(__always)
    package static func withInstance<T, R>(at address: UInt, as type: T.Type, _ body: (T) -> R) -> R {
        // A class reference is lent wherever this is inlined. Any other value (a protocol-typed service above all)
        // the compiler copies out of memory it cannot prove unchanged during `body`, a retain and a release, in
        // many callers; out of line, specialized with `body`, it lends it.
        if T.self is AnyObject.Type { return lend(at: address, as: type, body) }
        return lendOutOfLine(at: address, as: type, body)
    }

    @inlinable @inline(__always)
    static func lend<T, R>(at address: UInt, as _: T.Type, _ body: (T) -> R) -> R {
        body(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped.assumingMemoryBound(to: T.self).pointee)
    }

    @inlinable @inline(never)
    static func lendOutOfLine<T, R>(at address: UInt, as type: T.Type, _ body: (T) -> R) -> R {
        lend(at: address, as: type, body)
    }

    /// The service, of the box's type `T`: a new instance when transient, otherwise the one built on first use.
    /// Always inlined, as are ``build(_:as:)`` and ``run(_:as:)``: a transient's instance then comes back through
    /// fewer calls, each of which copied it and had a stack frame sized for the error.
    @inlinable @inline(__always)
    package func get<T>(from table: ServiceTable, as _: T.Type) throws(ServiceError) -> T {
        guard active.load(ordering: .acquiring) else { throw table.failed(inactive(), by: provider) }
        if case .transient = scope { return try build(table, as: T.self) }
        let address = beginRead()
        if address != 0 {
            defer { endRead() }
            return Self.instance(at: address, as: T.self)
        }
        endRead()
        return try publish(table, as: T.self)
    }

    /// A new instance, not kept, telling the table's observer. Inlinable, so that it is specialized where `T` is
    /// known: the factory then returns straight into the caller's result, with no temporary to move it from.
    @inlinable @inline(__always)
    func build<T>(_ table: ServiceTable, as _: T.Type) throws(ServiceError) -> T {
        guard table.isObserved else { return try run(table, as: T.self) }
        return try observedBuild(table, as: T.self)
    }

    @usableFromInline
    func observedBuild<T>(_ table: ServiceTable, as _: T.Type) throws(ServiceError) -> T {
        guard let observer = table.observer else { return try run(table, as: T.self) }
        return try observer.build(key, provider: provider) { () throws(ServiceError) -> T in
            try run(table, as: T.self)
        }
    }

    @inlinable @inline(__always)
    func run<T>(_ table: ServiceTable, as _: T.Type) throws(ServiceError) -> T {
        do {
            // Unchecked: the box was made with a `ServiceMaker<T>` for the key of `T` (see ``make``). Borrowed: the
            // box keeps its maker, and a retained one (as `unsafeDowncast` returns it) costs two atomic writes.
            let maker = Unmanaged.passUnretained(unsafeDowncast(make, to: ServiceMaker<T>.self))
            return try maker._withUnsafeGuaranteedRef { try $0.build(table) }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw factoryFailed(error)
        }
    }

    func cycle() -> ServiceError {
        ServiceError(
            .cycle, service: key.name, provider: provider,
            message: "the factory of \(key.name) in \(provider) resolves \(key.name) while it builds it, itself or "
                + "through another factory; take what it needs as a factory parameter instead, so that validation "
                + "sees the cycle.")
    }

    @usableFromInline
    func factoryFailed(_ error: any Error) -> ServiceError {
        ServiceError(
            .factoryFailed, service: key.name, provider: provider,
            message: "the factory of \(key.name) in \(provider) threw: \(error)", underlying: error)
    }

    /// Builds the service now (a singleton or cached service registered `eager`), so that a factory that throws
    /// fails its module at activation rather than a reader later.
    package func prebuild(_ table: ServiceTable) throws(ServiceError) {
        func prebuild<T>(as _: T.Type) -> ServiceError? {
            do throws(ServiceError) {
                _ = try get(from: table, as: T.self)
                return nil
            } catch {
                return error
            }
        }
        if let error = _openExistential(type, do: prebuild) { throw error }
    }

    /// A copy of the built instance (a singleton or cached service's), or `nil` when none is built.
    package func builtInstance() -> Any? {
        func copy<T>(as _: T.Type) -> Any? {
            storage.withLock { slot in
                UnsafePointer<T>(bitPattern: slot.address).map { $0.pointee as Any }
            }
        }
        return _openExistential(type, do: copy)
    }

    /// Releases the built instances of `boxes` (only of `.cached` services when `cachedOnly`), so the next use of
    /// each builds anew; waits once for readers that may still hold them.
    package static func reset(_ boxes: [ServiceBox], cachedOnly: Bool) {
        var dropped: [(box: ServiceBox, address: UInt)] = []
        for box in boxes where box.scope == .cached || (!cachedOnly && box.scope == .singleton) {
            let address = box.storage.withLock { slot -> UInt in
                box.published.store(0, ordering: .sequentiallyConsistent)
                // A build under way now ends with an instance nobody keeps.
                slot.generation &+= 1
                defer { slot.address = 0 }
                return slot.address
            }
            if address != 0 { dropped.append((box, address)) }
        }
        retired.withLock { retired in
            guard !retired.isEmpty else { return }
            let releasing = Set(boxes.map(ObjectIdentifier.init))
            dropped += retired.filter { releasing.contains(ObjectIdentifier($0.box)) }
            retired.removeAll { releasing.contains(ObjectIdentifier($0.box)) }
        }
        guard !dropped.isEmpty else { return }
        // A reader that loaded an old address a moment ago may still be reading it: free them only after.
        let names = dropped.map { UInt(bitPattern: ObjectIdentifier($0.box)) }.sorted()
        guard mosaic_wait_for_readers(names, names.count) != 0 else {
            // Released inside a read of one of them on this same thread, which the kernel never does (it releases
            // between awaits): waiting would never end, so the box's next release frees them instead.
            retired.withLock { $0.append(contentsOf: dropped) }
            return
        }
        for (box, address) in dropped { box.free(address) }
    }

    /// Instances released inside a read of them on the releasing thread, each freed by its box's next release (the
    /// entry keeps the box).
    private static let retired = Locked<[(box: ServiceBox, address: UInt)]>([])

    /// Ends and frees the instance the box owns at `address` (nothing at 0).
    private func free(_ address: UInt) {
        func free<T>(as _: T.Type) {
            guard let memory = UnsafeMutablePointer<T>(bitPattern: address) else { return }
            memory.deinitialize(count: 1)
            memory.deallocate()
        }
        _openExistential(type, do: free)
    }

    @usableFromInline
    func inactive() -> ServiceError {
        ServiceError(
            .providerInactive, service: key.name, provider: provider,
            message: "\(key.name) is provided by \(provider), which is not active now; it comes back when "
                + "\(provider) is activated again.")
    }
}
