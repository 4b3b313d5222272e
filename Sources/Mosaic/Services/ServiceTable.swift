/// A frozen map from service type to box: built once, then only read, with no lock and no hashing of strings.
///
/// Open addressing over a power-of-two array, keyed by the type's identity; a lookup is a multiply, a shift and
/// usually one comparison.
@usableFromInline
package final class ServiceTable: Sendable {
    @usableFromInline let keys: [UInt]
    @usableFromInline let boxes: [AnyServiceBox?]
    @usableFromInline let shift: Int

    /// A table of `boxes`, each under its key; a later box with the same key replaces an earlier one.
    package init(_ entries: [AnyServiceBox]) {
        var bits = 3
        while (1 << bits) < entries.count * 2 { bits += 1 }
        var keys = [UInt](repeating: 0, count: 1 << bits)
        var boxes = [AnyServiceBox?](repeating: nil, count: 1 << bits)
        let shift = UInt.bitWidth - bits
        for box in entries {
            let key = UInt(bitPattern: box.key.id)
            var slot = Self.slot(for: key, shift: shift)
            while keys[slot] != 0, keys[slot] != key { slot = (slot + 1) & (keys.count - 1) }
            keys[slot] = key
            boxes[slot] = box
        }
        self.keys = keys
        self.boxes = boxes
        self.shift = shift
    }

    /// Every box, in no particular order.
    package var all: [AnyServiceBox] { boxes.compactMap { $0 } }

    @inlinable
    static func slot(for key: UInt, shift: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt(shift))
    }

    /// The box registered for `id`, if any.
    @inlinable
    package func box(for id: ObjectIdentifier) -> AnyServiceBox? {
        let key = UInt(bitPattern: id)
        let mask = keys.count - 1
        var slot = Self.slot(for: key, shift: shift)
        while true {
            let found = keys[slot]
            if found == key { return boxes[slot] }
            if found == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Resolves a dependency of a factory: declared and validated at boot, so no visibility check.
    @inlinable
    package func dependency<T: Sendable>(_ type: T.Type) throws(ServiceError) -> T {
        if ServiceOverrides.areActive, let value = ServiceOverrides.current?.value(of: type) { return value }
        guard let box = box(for: ObjectIdentifier(type)) else {
            throw ServiceError(
                .noProvider, service: String(describing: type),
                message: "nothing provides \(type); register a provider for it.")
        }
        return try unsafeDowncast(box, to: ServiceBox<T>.self).get(from: self)
    }
}
