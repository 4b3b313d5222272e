internal import Mosaic

extension StateHub {
    /// Writes `key` as `writer` (see ``apply(_:as:_:)``), counting the write by key, writer and outcome.
    func write<Value>(
        _ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void
    ) async throws {
        guard let telemetry else { return try await apply(key, as: writer, update) }
        do {
            try await apply(key, as: writer, update)
            telemetry.count(
                MetricName.stateWrites, [("key", key.id), ("module", writer.rawValue), ("outcome", "written")])
        } catch {
            telemetry.count(
                MetricName.stateWrites, [("key", key.id), ("module", writer.rawValue), ("outcome", "failed")])
            throw error
        }
    }

    /// Runs `save`, recording how long persisting `key` took.
    func persisting<R>(_ key: String, _ save: () async throws -> R) async throws -> R {
        guard let telemetry else { return try await save() }
        let clock = ContinuousClock()
        let started = clock.now
        var outcome = "failed"
        defer {
            telemetry.record(
                MetricName.statePersistDuration, [("key", key), ("outcome", outcome)], clock.now - started)
        }
        let result = try await save()
        outcome = "saved"
        return result
    }
}
