internal import Mosaic
internal import MosaicKernel
internal import PostgresNIO

/// The entitlement decisions in `mosaic_policy`: one row per entitlement any instance granted or revoked.
struct PostgresPolicyStore: PolicyStore {
    let connections: PostgresConnections
    let listener: PostgresListener

    func decisions() async throws -> [Entitlement: Bool] {
        var decisions: [Entitlement: Bool] = [:]
        for row in try await connections.run("SELECT entitlement, granted FROM mosaic_policy") {
            let (name, granted) = try row.decode((String, Bool).self)
            let entitlement = Entitlement(name)
            // A row written by hand that is no entitlement name can match no module's entitlement: said, not used.
            if let problem = entitlement.problem {
                connections.logger.warning(
                    "mosaic_policy has a row that is no entitlement; it grants and revokes nothing",
                    metadata: ["entitlement": "\(name)", "problem": "\(problem)", "fix": "Delete the row."])
                continue
            }
            decisions[entitlement] = granted
        }
        return decisions
    }

    func decide(_ entitlement: Entitlement, granted: Bool) async throws {
        _ = try await connections.run(
            """
            INSERT INTO mosaic_policy (entitlement, granted) VALUES (\(entitlement.rawValue), \(granted))
            ON CONFLICT (entitlement) DO UPDATE SET granted = EXCLUDED.granted, decided_at = now()
            """)
    }

    func watch(_ onChange: @escaping @Sendable () -> Void) -> StoreWatch {
        listener.watchPolicy(onChange)
    }
}
