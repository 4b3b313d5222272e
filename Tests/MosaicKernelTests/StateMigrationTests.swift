import Foundation
import GRDB
import Mosaic
import Synchronization
import Testing

@testable import MosaicKernel

/// Version 3 of the favourite city; version 2 saved `CityV2`, version 1 (before the key had a version) a string.
struct City: Codable, Sendable, Equatable {
    var name: String
    var country: String
}

struct CityV2: Codable, Sendable, Equatable {
    var name: String
}

/// A state directory as an earlier release left it: a JSON file per key (read into the state database on first load),
/// or the state database, and how to put saved data in it the way older code did.
struct MigrationStore: CustomTestStringConvertible, Sendable {
    let legacyFile: Bool
    var testDescription: String { legacyFile ? "file" : "SQLite" }

    static let all = [MigrationStore(legacyFile: true), MigrationStore(legacyFile: false)]

    /// The storage a kernel on `directory` uses.
    func storage(in directory: String) -> EmbeddedStorage {
        EmbeddedStorage(directory: directory, clock: KernelClock(ContinuousClock()))
    }

    /// `data` saved at `version` as an earlier release did.
    func saveOld(_ data: Data, version: Int, for id: String, in directory: String) async throws {
        if legacyFile {
            let files = LegacyStateFiles(directory: directory)
            try (version == 1 ? data : StateEnvelope.seal(data, version: version)).write(to: files.url(for: id))
            return
        }
        try await storage(in: directory).save(data, version: version, for: id)
    }

    /// `json` saved as code from before versions saved it: a plain file, or a row of a database without a
    /// `version` column.
    func saveUnversioned(_ json: String, for id: String, in directory: String) async throws {
        if legacyFile {
            try Data(json.utf8).write(to: LegacyStateFiles(directory: directory).url(for: id))
            return
        }
        try await offThePool {
            try Self.database(in: directory).write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE mosaic_state (id TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
                        CREATE TABLE mosaic_state_unreadable (
                            id TEXT NOT NULL, value BLOB NOT NULL, reason TEXT NOT NULL, kept_at TEXT NOT NULL);
                        INSERT INTO mosaic_state (id, value) VALUES (?, ?);
                        """,
                    arguments: [id, Data(json.utf8)])
            }
        }
    }

    /// The state database in `directory`, opened as another process would: waiting while the kernel's connection
    /// holds a lock (closing it checkpoints its log) instead of failing with "database is locked".
    static func database(in directory: String) throws -> DatabaseQueue {
        var patient = Configuration()
        patient.busyMode = .timeout(10)
        return try DatabaseQueue(path: directory + "/state.sqlite", configuration: patient)
    }

    /// The saved data that was parked aside for `id`, with its version.
    func parked(_ id: String, in directory: String) async throws -> SavedState? {
        try await offThePool {
            try Self.database(in: directory).read { db in
                try Row.fetchOne(
                    db, sql: "SELECT value, version FROM mosaic_state_unreadable WHERE id = ?", arguments: [id]
                )
                .map { SavedState(data: $0["value"], version: $0["version"]) }
            }
        }
    }
}

extension StateKey where Value == City {
    static func favouriteCity(_ persistence: StatePersistence, migrations: [StateMigration]) -> Self {
        StateKey(
            "com.app.favourite-city", initial: City(name: "Chicago", country: "US"), persistence: persistence,
            version: 3, migrations: migrations)
    }

    /// The key with both steps: 1 → 2 → 3.
    static func migratedCity(_ persistence: StatePersistence) -> Self {
        favouriteCity(
            persistence,
            migrations: [
                .from(1, as: String.self) { CityV2(name: $0) },
                .from(2, as: CityV2.self) { City(name: $0.name, country: "unknown") },
            ])
    }
}

/// Boots a kernel on `directory`, reads `key` and returns its value and the diagnostics of the read.
func readThroughKernel<Value>(_ key: StateKey<Value>, in directory: String) async throws -> (Value, [Diagnostic]) {
    let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
    try await kernel.boot()
    await kernel.sharedState.load(key)
    let value = kernel.sharedState[key]
    let diagnostics = await kernel.diagnostics.with(.statePersistence)
    await kernel.shutdown()
    return (value, diagnostics)
}

@Suite(.timeLimit(.minutes(1))) struct StateMigrationTests {
    @Test(
        "data saved before the key had a version migrates from version 1, and is saved back at the key's version",
        arguments: MigrationStore.all)
    func unversionedDataMigrates(store: MigrationStore) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await store.saveUnversioned("\"Oslo\"", for: "com.app.favourite-city", in: directory)
        let (value, problems) = try await readThroughKernel(.migratedCity(.database), in: directory)
        #expect(value == City(name: "Oslo", country: "unknown"))
        #expect(problems.isEmpty, "\(problems)")
        let saved = try await #require(try store.storage(in: directory).load("com.app.favourite-city"))
        #expect(saved.version == 3)
        #expect(try JSONDecoder().decode(City.self, from: saved.data) == City(name: "Oslo", country: "unknown"))
    }

    @Test("a value saved at version 2 goes through the step from 2 only", arguments: MigrationStore.all)
    func chainFromTheMiddle(store: MigrationStore) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stepsRun = Locked<[Int]>([])
        let key = StateKey.favouriteCity(
            .database,
            migrations: [
                .from(1, as: String.self) { name in
                    stepsRun.withLock { $0.append(1) }
                    return CityV2(name: name)
                },
                .from(2, as: CityV2.self) { old in
                    stepsRun.withLock { $0.append(2) }
                    return City(name: old.name, country: "unknown")
                },
            ])
        try await store.saveOld(Data(#"{"name":"Lima"}"#.utf8), version: 2, for: key.id, in: directory)
        let (value, problems) = try await readThroughKernel(key, in: directory)
        #expect(value == City(name: "Lima", country: "unknown"))
        #expect(problems.isEmpty, "\(problems)")
        #expect(stepsRun.withLock { $0 } == [2])
    }

    @Test("the migrated value is persisted: a later launch reads it without migrating", arguments: MigrationStore.all)
    func migratedOnce(store: MigrationStore) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await store.saveUnversioned("\"Oslo\"", for: "com.app.favourite-city", in: directory)
        _ = try await readThroughKernel(.migratedCity(.database), in: directory)
        // The same key with no steps at all: it reads the value only if the migration was saved.
        let (value, problems) = try await readThroughKernel(
            .favouriteCity(.database, migrations: []), in: directory)
        #expect(value == City(name: "Oslo", country: "unknown"))
        #expect(problems.isEmpty, "\(problems)")
        // And a write after the migration keeps the key's version.
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await kernel.boot()
        try await kernel.sharedState.update(.migratedCity(.database)) { $0.country = "NO" }
        await kernel.shutdown()
        let saved = try await #require(try store.storage(in: directory).load("com.app.favourite-city"))
        #expect(saved == SavedState(data: Data(#"{"country":"NO","name":"Oslo"}"#.utf8), version: 3))
    }

    @Test(
        "a migration that throws parks the data with its version and reports key, version and fix",
        arguments: MigrationStore.all)
    func throwingMigrationParks(store: MigrationStore) async throws {
        struct NoSuchCity: Error {}
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await store.saveUnversioned("\"Atlantis\"", for: "com.app.favourite-city", in: directory)
        let key = StateKey.favouriteCity(
            .database,
            migrations: [
                .from(1, as: String.self) { name -> CityV2 in
                    guard name != "Atlantis" else { throw NoSuchCity() }
                    return CityV2(name: name)
                },
                .from(2, as: CityV2.self) { City(name: $0.name, country: "unknown") },
            ])
        let (value, problems) = try await readThroughKernel(key, in: directory)
        #expect(value == key.initial)
        let problem = try #require(problems.first)
        #expect(problems.count == 1 && problem.severity == .error)
        #expect(problem.message.contains("com.app.favourite-city (version 1)"), "\(problem.message)")
        #expect(problem.message.contains("the migration from version 1 threw NoSuchCity"), "\(problem.message)")
        #expect(problem.fix.contains("Make the migration from version 1 accept this value"))
        #expect(
            try await store.parked(key.id, in: directory) == SavedState(data: Data("\"Atlantis\"".utf8), version: 1))
        // Parked, not left in place: the next launch starts cleanly from the initial value.
        let (again, laterProblems) = try await readThroughKernel(key, in: directory)
        #expect(again == key.initial && laterProblems.isEmpty)
    }

    @Test("data saved by a newer version than the code knows is parked and reported", arguments: MigrationStore.all)
    func newerVersionParks(store: MigrationStore) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let future = Data(#"{"name":"Oslo","population":709000}"#.utf8)
        try await store.saveOld(future, version: 4, for: "com.app.favourite-city", in: directory)
        let (value, problems) = try await readThroughKernel(.migratedCity(.database), in: directory)
        #expect(value == City(name: "Chicago", country: "US"))
        let problem = try #require(problems.first)
        #expect(problem.message.contains("com.app.favourite-city (version 4)"), "\(problem.message)")
        #expect(problem.message.contains("newer than version 3"), "\(problem.message)")
        #expect(problem.fix.contains("Run the app version that saved it"))
        #expect(try await store.parked("com.app.favourite-city", in: directory) == SavedState(data: future, version: 4))
    }

    @Test(
        "raising a key's version without a step from the old one parks the data and names the missing step",
        arguments: MigrationStore.all)
    func missingStepParks(store: MigrationStore) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await store.saveUnversioned("\"Oslo\"", for: "com.app.favourite-city", in: directory)
        let key = StateKey.favouriteCity(
            .database, migrations: [.from(2, as: CityV2.self) { City(name: $0.name, country: "") }])
        let (value, problems) = try await readThroughKernel(key, in: directory)
        #expect(value == key.initial)
        let problem = try #require(problems.first)
        #expect(problem.message.contains("no migration reads version 1"), "\(problem.message)")
        #expect(problem.fix.contains("Add `.from(1, as: …)`"))
        #expect(try await store.parked(key.id, in: directory) == SavedState(data: Data("\"Oslo\"".utf8), version: 1))
    }

    @Test("a step whose result the next version cannot decode parks the data", arguments: MigrationStore.all)
    func wrongStepResultParks(store: MigrationStore) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await store.saveOld(Data(#"{"name":"Lima"}"#.utf8), version: 2, for: "com.app.city", in: directory)
        let key = StateKey(
            "com.app.city", initial: City(name: "Chicago", country: "US"), persistence: .database,
            version: 3, migrations: [.from(2, as: CityV2.self) { $0 }])  // forgot to add the country
        let (value, problems) = try await readThroughKernel(key, in: directory)
        #expect(value == key.initial)
        let problem = try #require(problems.first)
        #expect(problem.message.contains("cannot be read as City at version 3"), "\(problem.message)")
        #expect(problem.fix.contains("Make the last migration return what City decodes"))
        #expect(try await store.parked(key.id, in: directory)?.version == 2)
    }

    @Test("an old state database gains the version column, keeping its rows and its parked rows")
    func databaseSchemaMigration() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = MigrationStore(legacyFile: false)
        try await store.saveUnversioned("\"Bulls\"", for: "com.app.team", in: directory)
        // Opened twice: the second open finds the column and leaves the schema alone.
        try await store.storage(in: directory).open()
        let database = store.storage(in: directory)
        try await database.open()
        let loaded = try await database.load("com.app.team")
        #expect(loaded == SavedState(data: Data("\"Bulls\"".utf8), version: 1))
        let columns = try await offThePool {
            try MigrationStore.database(in: directory).read { db in
                try ["mosaic_state", "mosaic_state_unreadable"].map { try db.columns(in: $0).map(\.name) }
            }
        }
        #expect(columns.allSatisfy { $0.filter { $0 == "version" }.count == 1 }, "\(columns)")
    }

    @Test("an earlier release's file at version 1 is plain JSON; later versions are in an envelope read byte for byte")
    func fileFormat() async throws {
        let value = Data(#"{"b":1.5e300,"a":[]}"#.utf8)
        let sealed = StateEnvelope.seal(value, version: 7)
        #expect(String(decoding: sealed, as: UTF8.self) == #"{"mosaic-state-version":7,"value":{"b":1.5e300,"a":[]}}"#)
        #expect(StateEnvelope.open(sealed) == SavedState(data: value, version: 7))
        // Edited by hand with whitespace, still an envelope; anything else is a plain version-1 value.
        let edited = Data("{\n  \"mosaic-state-version\" : 2,\n  \"value\" : \"Oslo\"\n}\n".utf8)
        #expect(StateEnvelope.open(edited) == SavedState(data: Data("\"Oslo\"".utf8), version: 2))
        for plain in [#"{"version":2,"value":"Oslo"}"#, #"{"mosaic-state-version":"2","value":1}"#, "\"Oslo\"", ""] {
            #expect(StateEnvelope.open(Data(plain.utf8)) == nil, "\(plain)")
        }
    }

    @Test("a key declaring a step it never uses gets a warning naming it")
    func misdeclaredSteps() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = StateKey(
            "com.app.misdeclared", initial: 0, persistence: .database, version: 2,
            migrations: [.from(1, as: Int.self) { $0 }, .from(2, as: Int.self) { $0 }])
        let (_, problems) = try await readThroughKernel(key, in: directory)
        #expect(problems.map(\.severity) == [.warning])
        #expect(problems.first?.message.contains("a step from version 2, outside 1..<2") == true)
    }
}
