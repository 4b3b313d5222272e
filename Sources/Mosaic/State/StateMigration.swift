package import Foundation

/// One step that turns a state key's saved value of an older version into the next version.
///
/// A key whose value type changes shape declares its current `version` and a step from each older version. A step
/// decodes the saved JSON as the old type and returns the next version's value; steps chain, so a value saved at
/// version 1 of a key now at version 3 goes through the step from 1, then the step from 2:
///
/// ```swift
/// struct City: Codable, Sendable, Equatable { var name: String; var country: String }
/// struct CityV2: Codable { var name: String }   // what version 2 saved
///
/// extension StateKey where Value == City {
///     static var favouriteCity: Self {
///         StateKey(
///             "com.ghost.favourite-city", initial: City(name: "Chicago", country: "US"), persistence: .database,
///             version: 3,
///             migrations: [
///                 .from(1, as: String.self) { CityV2(name: $0) },             // version 1 saved a plain string
///                 .from(2, as: CityV2.self) { City(name: $0.name, country: "") },
///             ])
///     }
/// }
/// ```
///
/// Data saved before its key declared a version counts as version 1. The kernel migrates a saved value the first
/// time the key is read and saves the result at the key's version, so each value is migrated once. Saved data that
/// no step accepts (a step throws, a step is missing, the version is newer than the key's, or the result does not
/// decode) is kept aside and reported, and the key starts from its initial value; in storage that several instances
/// share, data saved by a newer version is left in place for the instances that read it, and this one refuses writes
/// of the key.
public struct StateMigration: Sendable {
    /// The saved version this step reads; it produces version `version + 1`.
    public let version: Int
    private let step: @Sendable (Data) throws -> Data

    /// A step reading a value saved at `version` as `old`, and returning the value of version `version + 1`.
    ///
    /// `migrate` may throw to refuse a value it cannot convert: the saved data is then kept aside and reported.
    public static func from<Old: Decodable & SendableMetatype, New: Encodable & SendableMetatype>(
        _ version: Int, as old: Old.Type, _ migrate: @escaping @Sendable (Old) throws -> New
    ) -> StateMigration {
        StateMigration(version: version) { data in
            let value: Old
            do {
                value = try JSONDecoder().decode(Old.self, from: data)
            } catch {
                throw StateMigrationFailure.Reason.undecodable("\(Old.self)", "\(error)")
            }
            let next: New
            do {
                next = try migrate(value)
            } catch {
                throw StateMigrationFailure.Reason.refused("\(error)")
            }
            return try StateMigration.encode(next)
        }
    }

    private init(version: Int, step: @escaping @Sendable (Data) throws -> Data) {
        self.version = version
        self.step = step
    }

    /// JSON as every store saves it: keys sorted, so equal values save equal bytes.
    package static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }

    /// Runs the step on `data` saved at ``version``.
    func migrate(_ data: Data) throws -> Data { try step(data) }
}

/// Why saved data could not be turned into a key's current value.
package struct StateMigrationFailure: Error, Sendable {
    /// What went wrong with the saved data.
    package enum Reason: Error, Sendable {
        /// The data did not decode as the type named (the key's value type, or a step's old type).
        case undecodable(String, String)
        /// A step threw.
        case refused(String)
        /// No step reads this version.
        case missingStep
        /// The data was saved by a newer version of the key than this code declares.
        case newer
    }

    /// The version the data was saved at.
    package let storedVersion: Int
    /// The version being read or migrated from when it failed.
    package let failedAt: Int
    /// What went wrong.
    package let reason: Reason
}

extension StateKey {
    /// `data` saved at `storedVersion`, migrated to ``version`` and decoded; `migrated` tells whether any step ran
    /// (the caller then saves the result, so the migration runs once).
    package func decode(_ data: Data, storedVersion: Int) throws(StateMigrationFailure) -> (
        value: Value, migrated: Bool
    ) {
        guard storedVersion <= version else {
            throw StateMigrationFailure(storedVersion: storedVersion, failedAt: storedVersion, reason: .newer)
        }
        var data = data
        var current = storedVersion
        while current < version {
            guard let step = migrations.first(where: { $0.version == current }) else {
                throw StateMigrationFailure(storedVersion: storedVersion, failedAt: current, reason: .missingStep)
            }
            do {
                data = try step.migrate(data)
            } catch let reason as StateMigrationFailure.Reason {
                throw StateMigrationFailure(storedVersion: storedVersion, failedAt: current, reason: reason)
            } catch {
                throw StateMigrationFailure(
                    storedVersion: storedVersion, failedAt: current, reason: .refused("\(error)"))
            }
            current += 1
        }
        do {
            return (try JSONDecoder().decode(Value.self, from: data), current != storedVersion)
        } catch {
            throw StateMigrationFailure(
                storedVersion: storedVersion, failedAt: version, reason: .undecodable("\(Value.self)", "\(error)"))
        }
    }

    /// What is wrong with the key's declared version and steps (a version below 1, a step from a version the key
    /// never saves, two steps from one version); empty when nothing is.
    package var migrationProblems: [String] {
        var problems: [String] = []
        if version < 1 { problems.append("its version is \(version); versions start at 1") }
        let versions = migrations.map(\.version)
        for from in versions where from < 1 || from >= version {
            problems.append("it has a step from version \(from), outside 1..<\(max(version, 1)) (never used)")
        }
        for from in Set(versions) where versions.count(where: { $0 == from }) > 1 {
            problems.append(
                "it has \(versions.count(where: { $0 == from })) steps from version \(from); the first is used")
        }
        return problems
    }
}
