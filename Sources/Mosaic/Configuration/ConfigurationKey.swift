/// A typed configuration value a module declares it reads, with a default (or none: the host must supply it) and
/// whether it is a secret (never logged, shown or traced).
///
/// ```swift
/// enum WeatherSettings {
///     static let apiKey = ConfigurationKey<String>("apiKey", secret: true)
///     static let refreshMinutes = ConfigurationKey<Int>("refreshMinutes", default: 15)
/// }
/// // in register(in:):  module.configuration(WeatherSettings.apiKey, WeatherSettings.refreshMinutes)
/// // in activate(_:):   let key = try context.configuration[WeatherSettings.apiKey]
/// ```
/// The host looks a key up under the module's identifier: `com.ghost.weather.apiKey`, which the environment spells
/// `COM_GHOST_WEATHER_API_KEY`.
public struct ConfigurationKey<Value: ConfigurationValue>: Sendable, Hashable {
    /// The key's name within the module, such as `apiKey` or `refresh.minutes`.
    public let name: String
    /// The value used when the host supplies none; `nil` makes the key required.
    public let defaultValue: Value?
    /// Whether the value is a secret: it never appears in logs, diagnostics, pages or traces.
    public let isSecret: Bool

    /// A key named `name`, required unless it has a default.
    public init(_ name: String, default defaultValue: Value? = nil, secret: Bool = false) {
        self.name = name
        self.defaultValue = defaultValue
        self.isSecret = secret
    }

    /// The key without its type, as the kernel validates it.
    package var erased: AnyConfigurationKey {
        AnyConfigurationKey(name: name, kind: Value.kind, defaultValue: defaultValue, isSecret: isSecret)
    }
}

/// A type a configuration value may have: text, a whole number, a number or a truth value.
public protocol ConfigurationValue: Sendable, Hashable {
    /// Which of the kinds the type is.
    static var kind: ConfigurationKind { get }
}

/// The kinds of configuration value.
public enum ConfigurationKind: String, Sendable, Hashable {
    /// Text.
    case string
    /// A whole number.
    case int
    /// A number.
    case double
    /// `true` or `false`.
    case bool
}

extension String: ConfigurationValue {
    /// Text.
    public static var kind: ConfigurationKind { .string }
}

extension Int: ConfigurationValue {
    /// A whole number.
    public static var kind: ConfigurationKind { .int }
}

extension Double: ConfigurationValue {
    /// A number.
    public static var kind: ConfigurationKind { .double }
}

extension Bool: ConfigurationValue {
    /// A truth value.
    public static var kind: ConfigurationKind { .bool }
}

/// A configuration key without its value's type.
package struct AnyConfigurationKey: Sendable, Hashable {
    /// The key's name within the module.
    package let name: String
    /// The value's kind.
    package let kind: ConfigurationKind
    /// The default, if any.
    package let defaultValue: (any ConfigurationValue)?
    /// Whether the value is a secret.
    package let isSecret: Bool

    /// Two keys are the same when their names are.
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The configuration values a module declared, as the host supplied them, validated at boot; while the module
/// is active, the values the host reloads since (a reloading file provider, say) replace them.
///
/// ```swift
/// context.task {
///     for await minutes in try context.configuration.updates(of: WeatherSettings.refreshMinutes) { … }
/// }
/// ```
public struct ModuleConfiguration: Sendable {
    private let values: [String: any ConfigurationValue]
    private let feed: (any ConfigurationFeed)?

    /// Values by key name.
    package init(_ values: [String: any ConfigurationValue] = [:]) {
        self.values = values
        self.feed = nil
    }

    private init(values: [String: any ConfigurationValue], feed: (any ConfigurationFeed)?) {
        self.values = values
        self.feed = feed
    }

    /// The same values, kept current by `feed` (the kernel's, for one active module).
    package func fed(by feed: any ConfigurationFeed) -> Self {
        Self(values: values, feed: feed)
    }

    /// The value of `key`: the host's (as last reloaded), or the key's default.
    ///
    /// Boot validated every key the module declared in `register(in:)` (`module.configuration(…)`), so a declared
    /// key always has a value here, as has a key with a default. Reading a key the module did not declare, and that
    /// has no default, throws ``ConfigurationError/Code/undeclared``.
    public subscript<Value>(_ key: ConfigurationKey<Value>) -> Value {
        get throws(ConfigurationError) {
            if let value = feed?.value(named: key.name) as? Value { return value }
            if let value = values[key.name] as? Value { return value }
            guard let fallback = key.defaultValue else {
                throw ConfigurationError(
                    .undeclared,
                    "Configuration key \(key.name) was not declared and has no default: add "
                        + "`module.configuration(…)` with it to register(in:), so that boot validates it.")
            }
            return fallback
        }
    }

    /// The value of `key` now, then each new value the host reloads, until the module deactivates; throws as
    /// reading it does.
    ///
    /// Only well-formed values arrive: a reloaded value that cannot be read as the key's type is reported (a
    /// diagnostic naming the module, the key and the fix) and the module keeps the last good one. The feed
    /// keeps at most `buffer` values the module has not read yet, dropping the oldest; it ends when the module
    /// deactivates (outside a kernel, after the first value).
    public func updates<Value>(of key: ConfigurationKey<Value>, buffer: Int = 8) throws(ConfigurationError) -> Feed<
        Value
    > {
        if let feed, let updates = feed.updates(named: key.name, as: Value.self, buffer: max(1, buffer)) {
            return updates
        }
        return .just(try self[key])
    }
}

extension ModuleConfiguration {
    /// The value of the key named `name` now (the host's, as last reloaded), or `nil` when there is none: what a
    /// host sends a module that runs in a process of its own.
    package func value(named name: String) -> (any ConfigurationValue)? {
        feed?.value(named: name) ?? values[name]
    }

    /// The value of the key named `name` now, then each new one the host reloads, until the module deactivates.
    package func updates<Value: ConfigurationValue>(named name: String, as type: Value.Type) -> Feed<Value>? {
        feed?.updates(named: name, as: type, buffer: 8)
    }
}

/// Where an active module's configuration values come from after boot: the kernel, which reloads them.
package protocol ConfigurationFeed: Sendable {
    /// The current value of the key named `name`, or `nil` when the feed has none.
    func value(named name: String) -> (any ConfigurationValue)?
    /// The current value of the key named `name`, then each new one, until the module deactivates; `nil` when
    /// the feed cannot deliver (the module is on its way out).
    func updates<Value: ConfigurationValue>(named name: String, as type: Value.Type, buffer: Int) -> Feed<Value>?
}
