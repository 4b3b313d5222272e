import Foundation
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

struct Preferences: Codable, Sendable, Equatable {
    var city: String
    var units: String
}

extension StateKey where Value == Preferences {
    static var preferences: Self {
        StateKey("com.app.preferences", initial: Preferences(city: "Chicago", units: "metric"))
    }
    static var storedPreferences: Self {
        StateKey(
            "com.app.stored-preferences", initial: Preferences(city: "Chicago", units: "metric"), persistence: .database
        )
    }
    static var savedPreferences: Self {
        StateKey(
            "com.app.saved-preferences", initial: Preferences(city: "Chicago", units: "metric"), persistence: .database)
    }
}

extension StateKey where Value == Int {
    static var counter: Self { StateKey("com.app.counter", initial: 0) }
    static var weatherOnly: Self { StateKey("com.app.weather-only", initial: 0, writers: ["com.app.weather"]) }
    static var stock: Self { StateKey("com.app.stock", initial: 10) }
}

/// A fresh, empty directory for one test.
func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mosaic-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A module that reads a persisted key it does not declare.
struct UndeclaredReaderModule: Module {
    static let manifest = Manifest(id: "com.test.undeclared-reader", version: "1.0.0")

    func activate(_ context: ActivationContext) async throws {
        _ = context.state[.savedPreferences]
    }
}

@Suite(.timeLimit(.minutes(1))) struct SharedStateTests {
    @Test("a persisted key read before it was loaded is reported with the fix for its reader: the host loads it")
    func hostReadsUnloadedKey() async throws {
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: try temporaryDirectory()))
        try await kernel.boot()
        _ = kernel.sharedState[.storedPreferences]
        let problem = try #require(await kernel.diagnostics.first { $0.code == .statePersistence })
        #expect(problem.message.contains("com.app.stored-preferences was read before it was loaded"))
        #expect(problem.fix.contains("kernel.sharedState.load(key)"), "\(problem.fix)")
        #expect(problem.modules.isEmpty)
        await kernel.shutdown()
    }

    @Test("a persisted key a module reads without declaring it is reported with the fix for that module: declare it")
    func moduleReadsUnloadedKey() async throws {
        let kernel = Kernel(
            modules: [UndeclaredReaderModule.self], host: testHost,
            options: KernelOptions(stateDirectory: try temporaryDirectory()), logger: quietLogger)
        try await kernel.boot()
        let problem = try #require(await kernel.diagnostics.first { $0.code == .statePersistence })
        #expect(problem.fix.contains("com.test.undeclared-reader's register(in:)"), "\(problem.fix)")
        #expect(problem.modules == ["com.test.undeclared-reader"])
        await kernel.shutdown()
    }

    @Test("modules read, write and observe a key; observers see each new value once")
    func readWriteObserve() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([
            eventModule("com.app.weather", contexts: contexts), eventModule("com.app.dashboard", contexts: contexts),
        ])
        try await kernel.boot()
        let weather = try #require(contexts["com.app.weather"])
        let dashboard = try #require(contexts["com.app.dashboard"])
        var values = dashboard.state.values(of: .preferences).makeAsyncIterator()
        #expect(await values.next()?.city == "Chicago")
        try await weather.state.update(.preferences) { $0.city = "Oslo" }
        #expect(await values.next()?.city == "Oslo")
        try await weather.state.set(.preferences, to: Preferences(city: "Oslo", units: "metric"))
        try await kernel.sharedState.update(.preferences) { $0.units = "imperial" }
        #expect(
            await values.next() == Preferences(city: "Oslo", units: "imperial"), "an unchanged write is not reported")
        #expect(dashboard.state[.preferences].units == "imperial")
        await kernel.shutdown()
    }

    @Test("a slice is observed on its own: changes elsewhere in the value are not reported")
    func slices() async throws {
        let kernel = makeKernel([])
        try await kernel.boot()
        var cities = kernel.sharedState.values(of: .preferences, \.city).makeAsyncIterator()
        #expect(await cities.next() == "Chicago")
        try await kernel.sharedState.update(.preferences) { $0.units = "imperial" }
        try await kernel.sharedState.update(.preferences) { $0.city = "Lima" }
        #expect(await cities.next() == "Lima")
        await kernel.shutdown()
    }

    @Test("a key may restrict its writers; others are refused with who may write")
    func writers() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([
            eventModule("com.app.weather", contexts: contexts), eventModule("com.app.sports", contexts: contexts),
        ])
        try await kernel.boot()
        try await #require(contexts["com.app.weather"]).state.set(.weatherOnly, to: 3)
        let error = await #expect(throws: StateError.self) {
            try await contexts["com.app.sports"]?.state.set(.weatherOnly, to: 4)
        }
        #expect(error?.message == "com.app.sports may not write com.app.weather-only; only com.app.weather may.")
        #expect(kernel.sharedState[.weatherOnly] == 3)
        await kernel.shutdown()
    }

    @Test("a module writes only the keys it declared: an undeclared write or transaction is refused, naming the fix")
    func undeclaredWrites() async throws {
        let contexts = Contexts()
        let kernel = makeKernel([
            serviceModule("com.app.quiet", onActivate: { contexts.keep($0) }) { $0.reads(.counter) }
        ])
        try await kernel.boot()
        let quiet = try #require(contexts["com.app.quiet"])
        let error = await #expect(throws: StateError.self) { try await quiet.state.set(.counter, to: 1) }
        #expect(error?.code == .notAllowed)
        #expect(error?.message.contains("module.writes(key)") == true, "\(String(describing: error))")
        let refused = await #expect(throws: StateError.self) {
            try await quiet.state.transaction { $0.set(.counter, to: 2) }
        }
        #expect(refused?.code == .notAllowed)
        #expect(kernel.sharedState[.counter] == 0, "nothing was written")
        await kernel.shutdown()
    }

    @Test("writes are atomic per key: 10,000 concurrent increments all count")
    func atomicWrites() async throws {
        // A clock that stands still: on a loaded machine the last of 100 writers may wait for the key's lane past
        // the storage time limit of a real one, and its write would fail (as it should) instead of counting.
        let kernel = makeKernel([], options: KernelOptions(clock: ManualClock()))
        try await kernel.boot()
        let state = kernel.sharedState
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask { for _ in 0..<100 { try await state.update(.counter) { $0 += 1 } } }
            }
            try await group.waitForAll()
        }
        #expect(state[.counter] == 10_000)
        await kernel.shutdown()
    }

    @Test("a key kept in a file survives a restart of the kernel")
    func persisted() async throws {
        let directory = try temporaryDirectory()
        let first = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await first.boot()
        try await first.sharedState.update(.savedPreferences) { $0.city = "Lisbon" }
        await first.shutdown()
        let second = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await second.boot()
        await second.sharedState.load(.savedPreferences)
        #expect(second.sharedState[.savedPreferences].city == "Lisbon")
        #expect(await second.diagnostics.isEmpty)
    }

    @Test("a key kept in the SQLite database survives a restart; an unreadable row is kept aside")
    func database() async throws {
        let directory = try temporaryDirectory()
        let first = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await first.boot()
        try await first.sharedState.update(.storedPreferences) { $0.city = "Lisbon" }
        await first.shutdown()
        let second = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await second.boot()
        await second.sharedState.load(.storedPreferences)
        #expect(second.sharedState[.storedPreferences].city == "Lisbon")
        #expect(await second.diagnostics.isEmpty)
        // The same identifier read as another type: the row cannot be decoded.
        let changedType = StateKey("com.app.stored-preferences", initial: 7, persistence: .database)
        let third = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await third.boot()
        await third.sharedState.load(changedType)
        #expect(third.sharedState[changedType] == 7)
        let problem = try #require(await third.diagnostics.first { $0.code == .statePersistence })
        #expect(
            problem.message.contains("cannot be read as Int") && problem.message.contains("mosaic_state_unreadable"))
    }

    @Test("an earlier release's unreadable file gives a diagnostic and the initial value, and its data is kept aside")
    func unreadable() async throws {
        let directory = try temporaryDirectory()
        let file = URL(fileURLWithPath: directory).appendingPathComponent("com.app.saved-preferences.json")
        try Data("{\"city\": 42".utf8).write(to: file)
        let kernel = makeKernel([], options: KernelOptions(stateDirectory: directory))
        try await kernel.boot()
        await kernel.sharedState.load(.savedPreferences)
        #expect(kernel.sharedState[.savedPreferences].city == "Chicago")
        let problem = try #require(await kernel.diagnostics.first { $0.code == .statePersistence })
        #expect(problem.message.contains("cannot be read as Preferences"))
        #expect(problem.message.contains("mosaic_state_unreadable"), "\(problem.message)")
        #expect(try String(contentsOfFile: file.path + ".imported", encoding: .utf8) == "{\"city\": 42")
        await kernel.shutdown()
    }

    @Test("a file-kept key without a state directory lives in memory, with a warning")
    func noDirectory() async throws {
        let kernel = makeKernel([])
        try await kernel.boot()
        try await kernel.sharedState.update(.savedPreferences) { $0.city = "Oslo" }
        await kernel.sharedState.load(.savedPreferences)
        #expect(kernel.sharedState[.savedPreferences].city == "Oslo")
        #expect(await kernel.diagnostics.map(\.code) == [.statePersistence])
        await kernel.shutdown()
    }
}
