internal import Mosaic

extension StateHub {
    /// Writes `key` as `writer` (see ``apply(_:as:_:)``), counting the write by key, writer and outcome.
    func write<Value>(_ key: StateKey<Value>, as writer: ModuleID, _ update: (inout Value) throws -> Void) throws {
        guard let telemetry else { return try apply(key, as: writer, update) }
        do {
            try apply(key, as: writer, update)
            telemetry.count(
                MetricName.stateWrites, [("key", key.id), ("module", writer.rawValue), ("outcome", "written")])
        } catch {
            telemetry.count(
                MetricName.stateWrites, [("key", key.id), ("module", writer.rawValue), ("outcome", "failed")])
            throw error
        }
    }

    /// Runs `save`, recording how long persisting `key` took.
    func persisting(_ key: String, _ save: () throws -> Void) throws {
        guard let telemetry else { return try save() }
        let clock = ContinuousClock()
        let started = clock.now
        var outcome = "failed"
        defer {
            telemetry.record(
                MetricName.statePersistDuration, [("key", key), ("outcome", outcome)], clock.now - started)
        }
        try save()
        outcome = "saved"
    }
}
