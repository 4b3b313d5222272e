package import Configuration
internal import Logging
public import Mosaic

/// One configuration value of a module as the host may show it: a secret's value is never here.
public struct ConfigurationEntry: Sendable, Hashable {
    /// The full key, such as `com.ghost.weather.apiKey`.
    public let key: String
    /// The value as text, or `(secret)` for a secret.
    public let value: String
    /// Whether the host supplied the value (else it is the key's default).
    public let isSupplied: Bool
    /// Whether the key is a secret.
    public let isSecret: Bool
}

extension Diagnostic.Code {
    /// A required configuration key has no value in any source.
    public static let configurationMissing: Self = "configuration.missing"
    /// A configuration value cannot be read as the key's type.
    public static let configurationMalformed: Self = "configuration.malformed"
    /// A reloaded configuration value is missing or cannot be read as the key's type; the module keeps the last
    /// good value.
    public static let configurationReloadRejected: Self = "configuration.reload-rejected"
}

/// Each module's configuration as the kernel read it, and the watch that reloads it.
struct ConfigurationReads {
    /// The values read at validation, which each activation's context holds.
    var values: [ModuleID: ModuleConfiguration] = [:]
    /// The values as the host may show them, secrets redacted; reloads update them.
    var entries: [ModuleID: [ConfigurationEntry]] = [:]
    /// The task that reloads configuration when a provider's values change, from boot to shutdown.
    var watch: Task<Void, Never>?
}

extension Kernel {
    /// The configuration of module `id` as boot read it, secrets redacted.
    public func configuration(of id: ModuleID) -> [ConfigurationEntry] {
        configurationReads.entries[id] ?? []
    }

    /// Reads module `index`'s declared configuration keys from the host's sources; each problem becomes a
    /// diagnostic naming the module, the key, where the kernel looked and the fix. Returns why the module cannot
    /// run, or `nil`. No value of a secret key reaches a diagnostic, a log or a span.
    func loadConfiguration(_ index: Int) -> String? {
        let keys = graph.nodes[index].registrar.configurationKeys
        guard !keys.isEmpty else { return nil }
        let id = graph.nodes[index].id
        let read = Self.readConfiguration(keys, of: id, from: options.configurationProviders)
        runtimeDiagnostics += read.diagnostics
        configurationReads.values[id] = ModuleConfiguration(read.values)
        configurationReads.entries[id] = read.entries
        guard !read.problems.isEmpty else {
            configurationHub.set(id, read.values)
            return nil
        }
        return "its configuration is incomplete: " + read.problems.joined(separator: "; ")
    }

    /// Every configuration problem boot would report for the modules of `graph` with `providers`, without running
    /// any module: what `validate` adds to the graph's own diagnostics.
    package static func configurationDiagnostics(
        of graph: ModuleGraph, from providers: [any ConfigProvider]
    ) -> [Diagnostic] {
        graph.nodes.flatMap { node in
            node.registrar.configurationKeys.isEmpty
                ? [] : readConfiguration(node.registrar.configurationKeys, of: node.id, from: providers).diagnostics
        }
    }

    /// Reads `keys` of module `id` from `providers`, a key's default standing in for a missing value: the values,
    /// what a host may show of them, and each key without a usable value as a phrase and as a diagnostic.
    private static func readConfiguration(
        _ keys: [AnyConfigurationKey], of id: ModuleID, from providers: [any ConfigProvider]
    ) -> (
        values: [String: any ConfigurationValue], entries: [ConfigurationEntry], problems: [String],
        diagnostics: [Diagnostic]
    ) {
        let reader = providers.isEmpty ? nil : ConfigReader(providers: providers)
        let sources =
            providers.isEmpty
            ? "no configuration source (the host passed none in KernelOptions.configurationProviders)"
            : providers.map(\.providerName).joined(separator: ", ")
        var values: [String: any ConfigurationValue] = [:]
        var entries: [ConfigurationEntry] = []
        var problems: [String] = []
        var diagnostics: [Diagnostic] = []
        for key in keys {
            let components =
                id.rawValue.split(separator: ".").map(String.init) + key.name.split(separator: ".").map(String.init)
            let name = components.joined(separator: ".")
            let environment = Self.environmentName(components)
            do {
                guard let reader else { throw MissingValue() }
                let value = try Self.read(key, ConfigKey(components), from: reader)
                values[key.name] = value
                entries.append(
                    ConfigurationEntry(
                        key: name, value: key.isSecret ? "(secret)" : "\(value)", isSupplied: true,
                        isSecret: key.isSecret))
            } catch {
                let missing =
                    error is MissingValue
                    || reader.map { !Self.hasValue(ConfigKey(components), in: $0, isSecret: key.isSecret) } ?? true
                if missing, let fallback = key.defaultValue {
                    values[key.name] = fallback
                    entries.append(
                        ConfigurationEntry(
                            key: name, value: key.isSecret ? "(secret)" : "\(fallback)", isSupplied: false,
                            isSecret: key.isSecret))
                    continue
                }
                let problem =
                    missing
                    ? "\(name) (\(key.kind.rawValue)) has no value: looked in \(sources)"
                    : "\(name) is not a valid \(key.kind.rawValue) in \(sources)"
                        + (key.isSecret ? "" : ": \(String(describing: error).prefix(300))")
                problems.append(problem)
                diagnostics.append(
                    Diagnostic(
                        missing ? .configurationMissing : .configurationMalformed, .error, modules: [id],
                        message: "\(id) cannot start: \(problem).",
                        fix: missing
                            ? "Set the environment variable \(environment), or \(name) in the configuration file "
                                + "or on the command line; or give the key a default in \(id)."
                            : "Give \(name) a \(key.kind.rawValue) value where it is set (environment variable "
                                + "\(environment), the configuration file or the command line)."))
            }
        }
        return (values, entries, problems, diagnostics)
    }

    /// Reads every declared key again and hands each changed, well-formed value to the modules that observe it.
    ///
    /// - Observers get the value through `ModuleConfiguration.updates(of:buffer:)`.
    /// - The kernel calls this whenever a provider reports new values (a `ReloadingFileProvider` the host runs, say);
    ///   a host may call it after changing a provider itself.
    ///
    /// A value that is now missing (with no default) or malformed does not reach the module: it keeps the last
    /// good value, and a `configuration.reload-rejected` diagnostic and a warning
    /// name the module, the key and the fix (never a secret's value). It goes away once the value is good again.
    public func reloadConfiguration() {
        let providers = options.configurationProviders
        guard !providers.isEmpty else { return }
        let reader = ConfigReader(providers: providers)
        let sources = providers.map(\.providerName).joined(separator: ", ")
        for index in records.indices {
            let id = graph.nodes[index].id
            let keys = graph.nodes[index].registrar.configurationKeys
            // A module whose configuration was incomplete at boot did not start; boot's diagnostics stand.
            guard !keys.isEmpty, configurationHub.holds(id) else { continue }
            for key in keys {
                let components =
                    id.rawValue.split(separator: ".").map(String.init)
                    + key.name.split(separator: ".").map(String.init)
                let name = components.joined(separator: ".")
                let value: any ConfigurationValue
                var isSupplied = true
                do {
                    value = try Self.read(key, ConfigKey(components), from: reader)
                } catch {
                    let missing = !Self.hasValue(ConfigKey(components), in: reader, isSecret: key.isSecret)
                    if missing, let fallback = key.defaultValue {
                        value = fallback
                        isSupplied = false
                    } else {
                        rejectReload(
                            of: key, named: name, module: id, missing: missing, sources: sources,
                            environment: Self.environmentName(components), error: error)
                        continue
                    }
                }
                clearReloadRejection(named: name, module: id)
                guard configurationHub.update(id, key.name, to: value) else { continue }
                // What the module renders may read the value: a host's kept pages are redrawn.
                moduleVersion.advance()
                if let position = configurationReads.entries[id]?.firstIndex(where: { $0.key == name }) {
                    configurationReads.entries[id]?[position] = ConfigurationEntry(
                        key: name, value: key.isSecret ? "(secret)" : "\(value)", isSupplied: isSupplied,
                        isSecret: key.isSecret)
                }
                logger.info(
                    "configuration reloaded", metadata: [LogKey.module: "\(id)", LogKey.configurationKey: "\(name)"])
            }
        }
    }

    /// Reports a reloaded value that does not reach the module, replacing an earlier report for the same key.
    private func rejectReload(
        of key: AnyConfigurationKey, named name: String, module id: ModuleID, missing: Bool, sources: String,
        environment: String, error: any Error
    ) {
        clearReloadRejection(named: name, module: id)
        let problem =
            missing
            ? "\(name) (\(key.kind.rawValue)) no longer has a value in \(sources)"
            : "\(name) is not a valid \(key.kind.rawValue) in \(sources)"
                + (key.isSecret ? "" : ": \(String(describing: error).prefix(300))")
        let diagnostic = Diagnostic(
            .configurationReloadRejected, .warning, modules: [id],
            message: "\(id) keeps the last good value of \(name): the reloaded \(problem).",
            fix: "Give \(name) a \(key.kind.rawValue) value where it is set (environment variable \(environment), "
                + "the configuration file or the command line); the next reload delivers it.")
        runtimeDiagnostics.append(diagnostic)
        logger.warning(
            "\(diagnostic.message) \(diagnostic.fix)",
            metadata: [LogKey.module: "\(id)", LogKey.configurationKey: "\(name)"])
    }

    private func clearReloadRejection(named name: String, module id: ModuleID) {
        runtimeDiagnostics.removeAll {
            $0.code == .configurationReloadRejected && $0.modules == [id]
                && $0.message.hasPrefix("\(id) keeps the last good value of \(name):")
        }
    }

    /// Starts reloading configuration whenever one of the host's providers reports new values, until shutdown;
    /// only when some module declares a key.
    func watchConfiguration() {
        let providers = options.configurationProviders
        guard configurationReads.watch == nil, !providers.isEmpty,
            graph.nodes.contains(where: { !$0.registrar.configurationKeys.isEmpty })
        else { return }
        let reload: @Sendable () async -> Void = { [weak self] in await self?.reloadConfiguration() }
        configurationReads.watch = Task {
            await withTaskGroup(of: Void.self) { group in
                for provider in providers {
                    group.addTask {
                        // The first snapshot may already differ from what boot read; reloading an unchanged one
                        // changes nothing.
                        try? await provider.watchSnapshot { updates in
                            for await _ in updates { await reload() }
                        }
                    }
                }
            }
        }
    }

    private static func read(
        _ key: AnyConfigurationKey, _ configKey: ConfigKey, from reader: ConfigReader
    ) throws -> any ConfigurationValue {
        switch key.kind {
        case .string: try reader.requiredString(forKey: configKey, isSecret: key.isSecret)
        case .int: try reader.requiredInt(forKey: configKey, isSecret: key.isSecret)
        case .double: try reader.requiredDouble(forKey: configKey, isSecret: key.isSecret)
        case .bool: try reader.requiredBool(forKey: configKey, isSecret: key.isSecret)
        }
    }

    /// Whether any provider has a value for `key`, of whatever type: what tells a missing value from a malformed
    /// one when a read fails (never the error's text).
    private static func hasValue(_ key: ConfigKey, in reader: ConfigReader, isSecret: Bool) -> Bool {
        reader.string(forKey: key, isSecret: isSecret) != nil || reader.int(forKey: key, isSecret: isSecret) != nil
            || reader.double(forKey: key, isSecret: isSecret) != nil
            || reader.bool(forKey: key, isSecret: isSecret) != nil
    }

    /// The environment variable swift-configuration reads for `components`: each camel-case word boundary and
    /// each component boundary becomes `_`, all upper case (`com.ghost.weather.apiKey` → `COM_GHOST_WEATHER_API_KEY`).
    static func environmentName(_ components: [String]) -> String {
        components.map { component in
            var text = ""
            var previousWasLower = false
            for character in component {
                if character.isUppercase, previousWasLower { text.append("_") }
                previousWasLower = character.isLowercase || character.isNumber
                text.append(character == "-" ? "_" : character)
            }
            return text.uppercased()
        }.joined(separator: "_")
    }
}

/// The log metadata keys of configuration reloads.
private enum LogKey {
    static let module = "mosaic.module.id"
    static let configurationKey = "mosaic.configuration.key"
}

/// No configuration source holds the key.
private struct MissingValue: Error {}
