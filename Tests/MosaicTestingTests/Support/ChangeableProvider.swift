import Configuration
import Mosaic
import Synchronization

/// A configuration provider a test changes with `setValue`, and that tells its snapshot watchers: what
/// swift-configuration's `MutableInMemoryProvider` does, kept under Mosaic's `Locked`. That one keeps its values
/// under `Synchronization.Mutex`, whose futex calls the thread sanitizer does not see, so a test's `setValue`
/// beside the kernel's watch was reported as a race inside it; a pthread mutex in sanitizer builds is seen.
/// `watchValue` gives the current value only: the kernel watches snapshots.
final class ChangeableProvider: ConfigProvider {
    private struct State {
        var values: [AbsoluteConfigKey: ConfigValue]
        var watchers: [Int: AsyncStream<any ConfigSnapshot>.Continuation] = [:]
        var nextWatcher = 0
    }

    let providerName = "test"
    private let state: Locked<State>

    init(_ values: [AbsoluteConfigKey: ConfigValue]) {
        state = Locked(State(values: values))
    }

    /// Sets `value` for `key` and hands the new snapshot to every watcher.
    func setValue(_ value: ConfigValue, forKey key: AbsoluteConfigKey) {
        state.withLock { state in
            state.values[key] = value
            let snapshot = InMemoryProvider(name: providerName, values: state.values).snapshot()
            for watcher in state.watchers.values { watcher.yield(snapshot) }
        }
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try snapshot().value(forKey: key, type: type)
    }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws ->
            Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot {
        let values = state.withLock { $0.values }
        return InMemoryProvider(name: providerName, values: values).snapshot()
    }

    func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (updates, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextWatcher
            state.nextWatcher += 1
            state.watchers[id] = continuation
            continuation.yield(InMemoryProvider(name: providerName, values: state.values).snapshot())
            return id
        }
        defer { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates))
    }
}
