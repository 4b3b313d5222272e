/// What a module says it exchanges with others through events and shared state, so that tools can show it
/// (a module canvas: the `canvas` command, the web host's `/modules/ID`) without running the module.
///
/// The kernel holds a module to its `writes`: a write of a key it did not declare is refused (`notAllowed`).
/// The state keys declared (read or written) are what the kernel loads before the module activates, so that reading
/// them never waits. In process, `publishes`, `subscribes` and `reads` are declarations only; for a module in a
/// process of its own they are what crosses: the keys its process mirrors, and the `Codable` event types whose
/// events go to and from its host.
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
    /// Every state key read or written, typed, so that the kernel can load it.
    package internal(set) var stateKeys: [DeclaredStateKey] = []
    /// The event types published or subscribed to, typed, so that their events can cross to an isolated module's
    /// process and back.
    package internal(set) var eventTypes: [DeclaredEventType] = []

    /// Nothing declared.
    package init() {}
}

extension ModuleRegistrar {
    /// Declares that the module publishes events of `type`.
    public mutating func publishes<Event: Sendable>(_ type: Event.Type) {
        interactions.published.appendOnce(qualifiedTypeName(type))
    }

    /// Declares that the module publishes events of `type`, which can cross to a module's own process.
    public mutating func publishes<Event: Codable & Sendable>(_ type: Event.Type) {
        interactions.published.appendOnce(qualifiedTypeName(type))
        interactions.declare(type)
    }

    /// Declares that the module subscribes to events of `type`.
    public mutating func subscribes<Event: Sendable>(to type: Event.Type) {
        interactions.subscribed.appendOnce(qualifiedTypeName(type))
    }

    /// Declares that the module subscribes to events of `type`, which can cross to a module's own process.
    public mutating func subscribes<Event: Codable & Sendable>(to type: Event.Type) {
        interactions.subscribed.appendOnce(qualifiedTypeName(type))
        interactions.declare(type)
    }

    /// Declares that the module writes the shared state `key`.
    public mutating func writes<Value>(_ key: StateKey<Value>) {
        interactions.written.appendOnce(key.id)
        interactions.declare(key)
    }

    /// Declares that the module reads or observes the shared state `key`.
    public mutating func reads<Value>(_ key: StateKey<Value>) {
        interactions.read.appendOnce(key.id)
        interactions.declare(key)
    }
}

extension ModuleInteractions {
    fileprivate mutating func declare<Value>(_ key: StateKey<Value>) {
        if !stateKeys.contains(where: { $0.id == key.id }) { stateKeys.append(DeclaredStateKey(key)) }
    }

    fileprivate mutating func declare<Event: Codable & Sendable>(_ type: Event.Type) {
        let declared = DeclaredEventType(type)
        if !eventTypes.contains(declared) { eventTypes.append(declared) }
    }
}

/// A state key a module declared, with what loads it: the key's value type is known only where it was declared.
package struct DeclaredStateKey: Sendable, Hashable {
    /// The key's identifier.
    package let id: String
    /// Where the key's value is kept.
    package let persistence: StatePersistence
    /// Loads the key into `loader`.
    package let load: @Sendable (_ loader: any StateLoading) async -> Void
    /// What moves the key's value across the boundary of an isolated module's process.
    package let crossing: StateKeyCrossing

    init<Value>(_ key: StateKey<Value>) {
        id = key.id
        persistence = key.persistence
        load = { loader in await loader.load(key) }
        crossing = StateKeyCrossing(key)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    package func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What loads declared state keys before their modules run: the kernel's state hub.
package protocol StateLoading: Sendable {
    /// Loads `key`'s saved value into memory, unless it is there already.
    func load<Value>(_ key: StateKey<Value>) async
}

extension [String] {
    fileprivate mutating func appendOnce(_ element: String) {
        if !contains(element) { append(element) }
    }
}
