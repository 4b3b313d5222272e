import Foundation
import Mosaic
import MosaicKernel
import PostgresNIO
import Testing

@testable import MosaicPostgres

struct Tally: Codable, Sendable, Equatable {
    var count: Int
}

extension StateKey where Value == String {
    static var city: Self { Self("com.test.city", initial: "Chicago", persistence: .database) }
    static var note: Self { Self("com.test.note", initial: "", persistence: .database) }
}

extension StateKey where Value == Int {
    static var counter: Self { Self("com.test.counter", initial: 0, persistence: .database) }
}

/// A module that needs the `weather` entitlement and does nothing else.
struct WeatherModule: Module {
    static let manifest = Manifest(id: "com.test.weather", version: "1.0.0", entitlements: ["weather"])
    func activate(_ context: ActivationContext) async throws {}
}

/// One app instance: its own connection to the database, and a kernel over it.
struct Instance {
    let database: PostgresBackend
    let kernel: Kernel

    static func boot(
        _ url: String, granted: Set<Entitlement> = ["weather"], heartbeat: Duration = .seconds(5),
        queryTimeLimit: Duration = .seconds(30)
    ) async throws -> Instance {
        let database = try await PostgresBackend.connect(url: url, queryTimeLimit: queryTimeLimit, heartbeat: heartbeat)
        var options = KernelOptions()
        options.externalStorage = database.storage
        let kernel = Kernel(
            modules: [WeatherModule.self], host: HostEnvironment(version: "1.0.0"), entitlements: .granted(granted),
            options: options)
        try await kernel.boot()
        return Instance(database: database, kernel: kernel)
    }

    func stop() async {
        await kernel.shutdown()
        await database.close()
    }
}

/// Waits for the first value of `values` that `accept` takes, and returns it.
func first<Value: Sendable>(
    _ values: Feed<Value>, where accept: (Value) -> Bool
) async -> Value? {
    for await value in values where accept(value) { return value }
    return nil
}
