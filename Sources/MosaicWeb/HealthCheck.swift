public import Mosaic

/// A check a module contributes to the host's readiness (`/health/ready`): it throws when the module cannot serve,
/// and the host reports the module and the error. A check that runs past the host's time limit fails too.
///
/// ```swift
/// module.contribute(to: .healthChecks, id: "database", title: "Database") { (database: any Database) in
///     HealthCheck { try await database.ping() }
/// }
/// ```
public struct HealthCheck: Sendable {
    /// Returns when healthy; throws, with a message that says what is wrong, when not.
    public let check: @Sendable () async throws -> Void

    /// A check that runs `check`.
    public init(_ check: @escaping @Sendable () async throws -> Void) {
        self.check = check
    }
}

extension ExtensionPoint where Content == HealthCheck {
    /// Checks the host runs for readiness, each within its time limit.
    public static var healthChecks: Self { ExtensionPoint(id: "mosaic.web.health-checks") }
}
