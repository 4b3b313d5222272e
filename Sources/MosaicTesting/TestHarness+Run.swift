extension TestHarness {
    /// Starts the test's modules, runs `body` with the running app, and shuts the app down afterwards, whether
    /// `body` returns or throws.
    ///
    /// ```swift
    /// try await TestHarness(WeatherModule.self).run { app in
    ///     await app.expect("com.ghost.weather", .active)
    /// }
    /// ```
    /// - Throws: What ``start()`` throws, or what `body` throws (after the shutdown).
    public func run<Result: Sendable>(_ body: (TestApp) async throws -> Result) async throws -> Result {
        let app = try await start()
        do {
            let result = try await body(app)
            await app.shutdown()
            return result
        } catch {
            await app.shutdown()
            throw error
        }
    }
}
