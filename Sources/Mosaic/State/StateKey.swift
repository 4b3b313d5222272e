/// A piece of state modules share without importing each other (AppState's `Application.state`): declared in an
/// interface target with its initial value, read, written and observed by any module.
///
/// ```swift
/// extension StateKey where Value == String {
///     static let favouriteCity = StateKey("com.ghost.favourite-city", initial: "Chicago", persistence: .jsonFile)
/// }
/// ```
///
/// A key whose value type changes shape between releases declares a `version` and the ``StateMigration`` steps
/// that read what older versions saved, so users keep their data (see ``StateMigration`` for an example).
public struct StateKey<Value: Codable & Sendable & Equatable>: Sendable {
    /// The key's identifier, unique in the app; also the name of its file when persisted.
    public let id: String
    /// The value before anything is written (and when persisted data cannot be read).
    public let initial: Value
    /// Where the value is kept between launches.
    public let persistence: StatePersistence
    /// The modules allowed to write; `nil` lets every module write. The host may always write.
    public let writers: Set<ModuleID>?
    /// The version of the value's shape, saved with each persisted value; 1 until the type changes shape.
    public let version: Int
    /// The steps that turn values saved at older versions into the next version, one per older version.
    public let migrations: [StateMigration]

    /// A key named `id` (unique in the app), with its value before anything is written, where it is kept, and the
    /// modules that may write it (`nil`: any).
    ///
    /// `version` is the version of `Value`'s shape (data saved before the key had one counts as version 1);
    /// `migrations` holds a step from each older version still found on disk.
    public init(
        _ id: String, initial: Value, persistence: StatePersistence = .memory, writers: Set<ModuleID>? = nil,
        version: Int = 1, migrations: [StateMigration] = []
    ) {
        self.id = id
        self.initial = initial
        self.persistence = persistence
        self.writers = writers
        self.version = version
        self.migrations = migrations
    }
}

/// Where a state key's value lives.
public enum StatePersistence: Sendable, Hashable {
    /// In memory: gone when the process ends.
    case memory
    /// Kept as ``database`` is. Releases before the embedded outbox kept such a key in a JSON file of its own; that
    /// file is read into the state database the first time the key loads, then renamed `<file>.imported`.
    @available(
        *, deprecated, renamed: "database",
        message: "kept in the state database: a file cannot commit with other keys and events"
    )
    case jsonFile
    /// Persisted: a row of the state database in the kernel's state directory (SQLite), or of external storage
    /// (PostgreSQL). A write is committed before it returns, with every other key and event of its transaction.
    case database
}

/// What keeps shared state: the kernel, or a test harness.
package protocol StateAccess: Sendable {
    /// The current value of `key`, from memory.
    func read<Value>(_ key: StateKey<Value>) -> Value
    /// Loads `key`'s saved value into memory, unless it is there already.
    func load<Value>(_ key: StateKey<Value>) async
    /// Changes `key`'s value atomically as `writer`, returning once the new value is stored; observers see it if it
    /// differs.
    func write<Value>(
        _ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void
    ) async throws
    /// The value now, then each new value; a slow observer skips to the newest.
    func values<Value>(of key: StateKey<Value>) -> Feed<Value>
    /// Commits `transaction`'s writes and durable events together, as `writer`.
    func commit(_ transaction: StateTransaction, as writer: ModuleID) async throws
}
