/// What a module says it exchanges with others through events and shared state, so that tools can show it
/// (a module canvas: the `canvas` command, the web host's `/modules/ID`) without running the module.
///
/// These are declarations, not grants: the kernel does not check them when the module publishes or writes.
/// ```swift
/// module.publishes(FeatureOpened.self)
/// module.writes(.favouriteCity)
/// ```
package struct ModuleInteractions: Sendable, Hashable {
    /// The names of the event types the module publishes.
    package internal(set) var published: [String] = []
    /// The names of the event types the module subscribes to.
    package internal(set) var subscribed: [String] = []
    /// The identifiers of the shared state keys the module writes.
    package internal(set) var written: [String] = []
    /// The identifiers of the shared state keys the module reads or observes.
    package internal(set) var read: [String] = []

    /// Nothing declared.
    package init() {}
}

extension ModuleRegistrar {
    /// Declares that the module publishes events of `type`.
    public mutating func publishes<Event: Sendable>(_ type: Event.Type) {
        interactions.published.appendOnce(qualifiedTypeName(type))
    }

    /// Declares that the module subscribes to events of `type`.
    public mutating func subscribes<Event: Sendable>(to type: Event.Type) {
        interactions.subscribed.appendOnce(qualifiedTypeName(type))
    }

    /// Declares that the module writes the shared state `key`.
    public mutating func writes<Value>(_ key: StateKey<Value>) {
        interactions.written.appendOnce(key.id)
    }

    /// Declares that the module reads or observes the shared state `key`.
    public mutating func reads<Value>(_ key: StateKey<Value>) {
        interactions.read.appendOnce(key.id)
    }
}

extension [String] {
    fileprivate mutating func appendOnce(_ element: String) {
        if !contains(element) { append(element) }
    }
}
