internal import Mosaic
internal import Synchronization

/// Every module's current configuration values, and the feeds of modules that observe them: boot fills it,
/// ``Kernel/reloadConfiguration()`` changes it. A value is set and sent under one lock, and a new observer reads
/// the current value and subscribes under the same lock, so an observer misses no change and sees none twice.
final class ConfigurationHub: Sendable {
    /// One key's new value.
    struct Change: Sendable {
        let module: ModuleID
        let name: String
        let value: any ConfigurationValue
    }

    private let values = Locked<[ModuleID: [String: any ConfigurationValue]]>([:])
    private let changes = Broadcast<Change>()

    /// Sets every value of `module` (at boot), without telling observers.
    func set(_ module: ModuleID, _ moduleValues: [String: any ConfigurationValue]) {
        values.withLock { $0[module] = moduleValues }
    }

    /// Whether boot set `module`'s values (its configuration was complete).
    func holds(_ module: ModuleID) -> Bool {
        values.withLock { $0[module] != nil }
    }

    /// The current value of `name` for `module`.
    func value(_ module: ModuleID, _ name: String) -> (any ConfigurationValue)? {
        values.withLock { $0[module]?[name] }
    }

    /// Sets `name` of `module` to `value` and tells its observers; returns whether the value changed.
    @discardableResult
    func update(_ module: ModuleID, _ name: String, to value: any ConfigurationValue) -> Bool {
        values.withLock { values in
            if let old = values[module]?[name], AnyHashable(old) == AnyHashable(value) { return false }
            values[module, default: [:]][name] = value
            changes.send(Change(module: module, name: name, value: value))
            return true
        }
    }

    /// The current value of `name` for `module`, then each new one, keeping at most `buffer` unread.
    func subscription<Value: ConfigurationValue>(
        _ module: ModuleID, _ name: String, as type: Value.Type, buffer: Int
    ) -> Subscription<Value> {
        values.withLock { values in
            let current = values[module]?[name].map { Change(module: module, name: name, value: $0) }
            return changes.subscribe(buffering: .newest(buffer), first: current) { change in
                change.module == module && change.name == name ? change.value as? Value : nil
            }
        }
    }

    /// Ends every feed (the kernel shut down).
    func finish() {
        changes.finish()
    }
}

/// One active module's view of the store: its feeds end when its ledger is withdrawn.
struct ModuleConfigurationFeed: ConfigurationFeed {
    let store: ConfigurationHub
    let ledger: ModuleLedger
    /// Read from the ledger rather than kept: two references fit in an existential's inline buffer, so a module's
    /// configuration holds its feed without a box of its own.
    var module: ModuleID { ledger.module }

    func value(named name: String) -> (any ConfigurationValue)? {
        store.value(module, name)
    }

    func updates<Value: ConfigurationValue>(
        named name: String, as type: Value.Type, buffer: Int
    ) -> Feed<Value>? {
        guard ledger.isOpen else { return nil }
        return ledger.adopt(store.subscription(module, name, as: type, buffer: buffer))
    }
}
