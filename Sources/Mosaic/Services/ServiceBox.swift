public import Synchronization

/// Where one registered service lives at run time: its factory, its scope, whether its module is active, and its
/// instance once built. The kernel makes one per registration; ``Services`` reads them without a lock.
// SAFETY: every stored property here is immutable or atomic (`@unchecked` only because the class is open to its
// one subclass, which argues its own state below).
@usableFromInline
package class AnyServiceBox: @unchecked Sendable {
    @usableFromInline package let key: ServiceKey
    @usableFromInline package let scope: ServiceScope
    @usableFromInline package let provider: ModuleID
    @usableFromInline let active = Atomic<Bool>(false)
    /// The address of the built instance's holder, or 0; see ``ServiceBox`` for why reading it is safe.
    @usableFromInline let published = Atomic<UInt>(0)

    init(key: ServiceKey, scope: ServiceScope, provider: ModuleID) {
        self.key = key
        self.scope = scope
        self.provider = provider
    }

    /// Makes the service resolvable (its module is active).
    package func activate() { active.store(true, ordering: .releasing) }

    /// Makes resolving fail with ``ServiceError/Code-swift.struct/providerInactive`` and drops the instance.
    package func deactivate() {
        active.store(false, ordering: .releasing)
        reset(cachedOnly: false)
    }

    /// Drops the built instance (only of `.cached` services when `cachedOnly`), so the next use builds anew.
    package func reset(cachedOnly: Bool) {}

    /// The address of the built instance's holder when the service is active and built, else 0. Lives in the
    /// non-generic base so that the hot path reads it at a fixed offset.
    @inlinable
    package final func builtAddress() -> UInt {
        let address = published.load(ordering: .acquiring)
        return address != 0 && active.load(ordering: .relaxed) ? address : 0
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
// Holders are immutable and `holders` keeps every one alive until the box is deinitialized; `published` and
// `holders` change only inside `holders`' lock, and a holder is fully built before its address is stored with
// release ordering, which readers load with acquire ordering. `factory` is an immutable `@Sendable` closure.
// SAFETY: hence a reader that loads a non-zero `published` always dereferences a live, fully built, immutable holder.
@usableFromInline
package final class ServiceBox<T: Sendable>: AnyServiceBox, @unchecked Sendable {
    private let holders = Mutex<[Holder<T>]>([])
    private let factory: @Sendable (ServiceTable) throws -> T

    package init(
        key: ServiceKey, scope: ServiceScope, provider: ModuleID,
        factory: @escaping @Sendable (ServiceTable) throws -> T
    ) {
        self.factory = factory
        super.init(key: key, scope: scope, provider: provider)
    }

    /// The service: a new instance when transient, otherwise the one built on first use.
    @inlinable
    package func get(from table: ServiceTable) throws(ServiceError) -> T {
        guard active.load(ordering: .acquiring) else { throw inactive() }
        if case .transient = scope { return try build(table) }
        let address = published.load(ordering: .acquiring)
        if address != 0 { return Self.value(at: address) }
        return try publish(table)
    }

    /// The value of the holder at `address`, read without retaining the holder.
    @inlinable
    package static func value(at address: UInt) -> T {
        // The address came from `Unmanaged.passUnretained(holder).toOpaque()` of a holder the box keeps alive.
        Unmanaged<Holder<T>>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
            ._withUnsafeGuaranteedRef { $0.value }
    }

    /// Runs `body` with the value of the holder at `address`, retaining neither the holder nor the value.
    @inlinable
    package static func withValue<R>(at address: UInt, _ body: (T) -> R) -> R {
        Unmanaged<Holder<T>>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
            ._withUnsafeGuaranteedRef { body($0.value) }
    }

    /// Builds the instance once, under the lock; inside `withOverrides` it is built fresh and not kept, so a test's
    /// mocks never leak into the kernel's singletons.
    @usableFromInline
    func publish(_ table: ServiceTable) throws(ServiceError) -> T {
        if ServiceOverrides.areActive, ServiceOverrides.current != nil { return try build(table) }
        return try holders.withLock { holders throws(ServiceError) -> T in
            let address = published.load(ordering: .acquiring)
            if address != 0 { return Self.value(at: address) }
            let holder = Holder(try build(table))
            holders.append(holder)
            published.store(UInt(bitPattern: Unmanaged.passUnretained(holder).toOpaque()), ordering: .releasing)
            return holder.value
        }
    }

    @usableFromInline
    func build(_ table: ServiceTable) throws(ServiceError) -> T {
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

    package override func reset(cachedOnly: Bool) {
        guard scope == .cached || (!cachedOnly && scope == .singleton) else { return }
        // The old holder stays in `holders`: a reader that loaded its address a moment ago may still use it.
        holders.withLock { _ in published.store(0, ordering: .releasing) }
    }
}

/// An immutable home for a built instance, so that it can be published by address.
@usableFromInline
final class Holder<T: Sendable>: Sendable {
    @usableFromInline let value: T
    init(_ value: T) { self.value = value }
}
