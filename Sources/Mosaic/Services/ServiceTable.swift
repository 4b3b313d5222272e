/// A frozen map from service type to box: built once, then only read, with no lock and no hashing of strings.
///
/// Open addressing over a power-of-two array, keyed by the type's identity; a lookup is a multiply, a shift and
/// usually one comparison.
@usableFromInline
package final class ServiceTable: Sendable {
    @usableFromInline let keys: [UInt]
    /// The boxes by slot, unretained: `owners` keeps them alive, and lookups then cost no reference counting.
    @usableFromInline let slots: [Unmanaged<ServiceBox>?]
    private let owners: [ServiceBox]
    @usableFromInline let shift: Int
    /// Who learns of builds and failed resolves through this table (the kernel's telemetry).
    package let observer: (any ServiceObserver)?
    /// Whether there is an ``observer``: checking costs no copy of the existential (a retain and a release).
    @usableFromInline package let isObserved: Bool

    /// A table of `boxes`, each under its key; a later box with the same key replaces an earlier one.
    package init(_ entries: [ServiceBox], observer: (any ServiceObserver)? = nil) {
        self.observer = observer
        self.isObserved = observer != nil
        var bits = 3
        while (1 << bits) < entries.count * 2 { bits += 1 }
        var keys = [UInt](repeating: 0, count: 1 << bits)
        var slots = [Unmanaged<ServiceBox>?](repeating: nil, count: 1 << bits)
        let shift = UInt.bitWidth - bits
        for box in entries {
            let key = UInt(bitPattern: box.key.id)
            var slot = Self.slot(for: key, shift: shift)
            while keys[slot] != 0, keys[slot] != key { slot = (slot + 1) & (keys.count - 1) }
            keys[slot] = key
            slots[slot] = Unmanaged.passUnretained(box)
        }
        self.keys = keys
        self.slots = slots
        self.owners = entries
        self.shift = shift
    }

    @inlinable
    static func slot(for key: UInt, shift: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt(shift))
    }

    /// The box registered for `id`, if any, unretained: valid while this table lives.
    @inlinable @inline(__always)
    package func box(for id: ObjectIdentifier) -> Unmanaged<ServiceBox>? {
        let key = UInt(bitPattern: id)
        let mask = keys.count - 1
        var slot = Self.slot(for: key, shift: shift)
        while true {
            let found = keys[slot]
            if found == key { return slots[slot] }
            if found == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Resolves `type` from the box in `slot` without retaining the box.
    @inlinable
    package func resolve<T: Sendable>(_ box: Unmanaged<ServiceBox>, as type: T.Type) throws(ServiceError) -> T {
        // The common case, a built instance, reads the box without retaining it; anything else takes the long way.
        try Self.builtValue(in: box, as: type) { () throws(ServiceError) -> T in
            try Self.get(box, from: self, as: type)
        }
    }

    /// What `box` gives (``ServiceBox/get(from:as:)``), its dependencies resolved from `table`, with the box borrowed
    /// rather than retained: a resolve then writes no reference count of a box that other threads read too.
    @inlinable
    package static func get<T>(_ box: Unmanaged<ServiceBox>, from table: ServiceTable, as type: T.Type)
        throws(ServiceError) -> T
    {
        do {
            return try box._withUnsafeGuaranteedRef { try $0.get(from: table, as: type) }
        } catch let error as ServiceError {
            throw error
        } catch {
            // `get` throws only ServiceError; the borrowing call above forgets the type.
            throw ServiceError(.factoryFailed, service: String(reflecting: type), message: "\(error)")
        }
    }

    /// The instance `box` has built, read without retaining the box, or else (transient, not built, or not active)
    /// what `otherwise` returns. No `T?` in between: code not specialized for `T` would ask the runtime for the
    /// metadata of `Optional<T>` on every call.
    @inlinable @inline(__always)
    package static func builtValue<T: Sendable>(
        in box: Unmanaged<ServiceBox>, as type: T.Type, otherwise: () throws(ServiceError) -> T
    ) throws(ServiceError) -> T {
        if box._withUnsafeGuaranteedRef({ $0.isTransient }) { return try otherwise() }
        let address = box._withUnsafeGuaranteedRef { $0.beginRead() }
        if address != 0 {
            defer { box._withUnsafeGuaranteedRef { $0.endRead() } }
            return ServiceBox.instance(at: address, as: type)
        }
        box._withUnsafeGuaranteedRef { $0.endRead() }
        return try otherwise()
    }

    /// Reports `error`, a failed resolve by `module`, to the observer; returns it.
    @usableFromInline
    package func failed(_ error: ServiceError, by module: ModuleID) -> ServiceError {
        observer?.resolveFailed(error, by: module)
        return error
    }

    /// Resolves a dependency of a factory: declared and validated at boot, so no visibility check.
    @inlinable
    package func dependency<T: Sendable>(_ type: T.Type) throws(ServiceError) -> T {
        if OverrideScope.areActive, let value = OverrideScope.current?.value(of: type) { return value }
        guard let box = box(for: ObjectIdentifier(type)) else {
            throw ServiceError(
                .noProvider, service: qualifiedTypeName(type),
                message: "nothing provides \(type); register a provider for it.")
        }
        return try resolve(box, as: type)
    }
}
