internal import Configuration
internal import Foundation
internal import Mosaic

// An isolated module's configuration: the host reads it from its own sources, as for any module, and sends the
// values to the module's process when it activates; the process's kernel reads them from there, and each value the
// host reloads reaches the module's observers there as a notice.

/// One configuration value as it crosses to a module's process.
enum CrossingConfigurationValue: Codable, Sendable, Hashable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    init?(_ value: any ConfigurationValue) {
        switch value {
        case let value as String: self = .string(value)
        case let value as Int: self = .int(value)
        case let value as Double: self = .double(value)
        case let value as Bool: self = .bool(value)
        default: return nil
        }
    }

    var value: any ConfigurationValue {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        }
    }

    var content: ConfigContent {
        switch self {
        case .string(let value): .string(value)
        case .int(let value): .int(value)
        case .double(let value): .double(value)
        case .bool(let value): .bool(value)
        }
    }
}

extension ModuleConfiguration {
    /// The values of `keys` now, as they cross to the module's process.
    func crossing(_ keys: [AnyConfigurationKey]) -> [String: CrossingConfigurationValue] {
        var values: [String: CrossingConfigurationValue] = [:]
        for key in keys {
            if let value = value(named: key.name).flatMap(CrossingConfigurationValue.init) { values[key.name] = value }
        }
        return values
    }

    /// Calls `changed` with each new value of `key` the host reloads, until the module deactivates.
    func follow(
        _ key: AnyConfigurationKey, _ changed: @escaping @Sendable (CrossingConfigurationValue) -> Void
    ) -> (@Sendable () async -> Void)? {
        func follow<Value: ConfigurationValue>(_ type: Value.Type) -> (@Sendable () async -> Void)? {
            guard let updates = updates(named: key.name, as: type) else { return nil }
            return {
                for await value in updates { if let crossing = CrossingConfigurationValue(value) { changed(crossing) } }
            }
        }
        switch key.kind {
        case .string: return follow(String.self)
        case .int: return follow(Int.self)
        case .double: return follow(Double.self)
        case .bool: return follow(Bool.self)
        }
    }
}

/// The provider a module's process reads its configuration from: the values its host sent, under the module's
/// keys, as the host's own sources hold them.
func crossedConfiguration(
    _ values: [String: CrossingConfigurationValue], of module: ModuleID, keys: [AnyConfigurationKey]
) -> InMemoryProvider {
    let secret = Set(keys.filter(\.isSecret).map(\.name))
    var provided: [AbsoluteConfigKey: ConfigValue] = [:]
    for (name, value) in values {
        let components =
            module.rawValue.split(separator: ".").map(String.init) + name.split(separator: ".").map(String.init)
        provided[AbsoluteConfigKey(components)] = ConfigValue(value.content, isSecret: secret.contains(name))
    }
    return InMemoryProvider(name: "the host of \(module)", values: provided)
}
