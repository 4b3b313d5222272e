import Mosaic
import MosaicKernel
import Testing

@Suite(.timeLimit(.minutes(1))) struct BisectTests {
    /// 20 modules, the last ten each requiring one of the first ten, and the last on demand (started before the
    /// bisection): what a bisection must bring back as it was.
    static func app() -> Kernel {
        let ids = (1...20).map { ModuleID("com.app.m\($0)") }
        let factories = ids.enumerated().map { offset, id in
            offset >= 10
                ? probe(id, requires: [.module(ids[offset - 10], "1.0.0"..<"2.0.0")])
                : probe(id)
        }
        let onDemand = ModuleFactory(
            manifest: Manifest(id: "com.app.on-demand", version: "1.0.0"), register: { $0.activation = .onDemand },
            make: { Probe() })
        return makeKernel(factories + [onDemand])
    }

    @Test(
        "bisect finds the planted module of 20 in at most ⌈log2 20⌉ + 1 checks, wherever it is, and restores every state"
    )
    func findsThePlantedModule() async throws {
        let kernel = Self.app()
        try await kernel.boot()
        try await kernel.start("com.app.on-demand")
        let before = await kernel.states
        for planted in (1...20).map({ ModuleID("com.app.m\($0)") }) {
            let found = try await kernel.bisect { await kernel.state(of: planted)?.isActive != true }
            #expect(found.module == planted, "\(found)")
            #expect(found.steps.count <= 6, "\(found)")
            #expect(found.steps.first?.passed == false && found.steps.first?.heldOff == [])
            #expect(await kernel.states == before, "every module is back as it was")
        }
        await kernel.shutdown()
    }

    @Test("a check that passes with every module active finds nothing, and holds nothing off")
    func nothingToFind() async throws {
        let kernel = Self.app()
        try await kernel.boot()
        let found = try await kernel.bisect { true }
        #expect(found.module == nil && found.steps.count == 1)
        #expect(found.description.contains("nothing to find"))
        await kernel.shutdown()
    }
}
