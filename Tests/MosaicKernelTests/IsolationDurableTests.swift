import Foundation
import IsolationFixtures
import Mosaic
import MosaicKernel
import MosaicTesting
import Testing

extension Kernel {
    /// Moves `clock` on a second at a time, each time once the durable handlers' work has settled, until `done`.
    func advance(_ clock: ManualClock, until done: () async -> Bool) async throws {
        while await !done() {
            try Task.checkCancellation()
            await durableWorkSettled()
            clock.advance(by: .seconds(1))
            await Task.yield()
        }
    }
}

@Suite(
    .timeLimit(.minutes(1)),
    .disabled(if: IsolationFixtures.underThreadSanitizer, Comment(rawValue: IsolationFixtures.sanitizerReason)))
struct IsolationDurableTests {
    let orders = IsolationFixtures.orders

    @Test("an isolated module's durable publishes reach the host's outbox, and its handler counts each once")
    func countedOnce() async throws {
        let clock = ManualClock()
        let kernel = try isolatingKernel([orders], hostIsolates: [orders], clock: clock)
        let report = try await kernel.boot()
        #expect(report[orders]?.state.isActive == true, "\(report)")
        let shipped = kernel.events.subscribe(to: FixtureShipped.self)
        for _ in 1...10 {
            #expect(await kernel.open("ghost://dashboard/order") == .handled(tab: "dashboard", module: orders))
        }
        var numbers: Set<Int> = []
        for await envelope in shipped {
            numbers.insert(envelope.event.number)
            if numbers.count == 10 { break }
        }
        #expect(numbers == Set(1...10))
        await kernel.durableWorkSettled()
        #expect(kernel.sharedState[.fixtureOrders] == 10, "each delivery's count committed once")
        #expect(try await kernel.undeliveredEvents(limit: 100).isEmpty)
        await kernel.shutdown()
    }

    @Test(
        "a trap in an isolated module's durable handler fails it alone; the restarted module completes the delivery once"
    )
    func trapInDurableHandler() async throws {
        let clock = ManualClock()
        let kernel = try isolatingKernel([orders, IsolationFixtures.echo], hostIsolates: [orders], clock: clock)
        try await kernel.boot()
        let first = try #require(kernel.status(of: orders)?.processIdentifier)
        let shipped = kernel.events.subscribe(to: FixtureShipped.self)

        // The order is stored before its delivery traps, which may end the process before the link's answer.
        _ = await kernel.open("ghost://dashboard/trap-order")
        let failed = try #require(await kernel.state(of: orders, once: \.isFailed))
        #expect(failed.reason?.contains(IsolationFixtures.trapMessage) == true, "\(failed)")
        #expect(try await kernel.widgetText(of: "com.app.bystander") == "steady")
        #expect(try await kernel.echoAnswers())
        #expect(kernel.sharedState[.fixtureOrders] == 0, "the trapped attempt recorded nothing")

        // The module restarts, and the delivery its crash handed back runs again: once.
        // (The clock moves only while it is failed: its activation has a time limit of its own.)
        try await kernel.advance(clock) { await kernel.state(of: orders)?.isFailed == false }
        let restarted = await kernel.state(of: orders) { $0.isActive || $0.isFailed }
        #expect(restarted?.isActive == true, "\(String(describing: restarted))")
        #expect(kernel.status(of: orders)?.processIdentifier != first)
        try await kernel.advance(clock) { kernel.sharedState[.fixtureOrders] == 1 }
        for await envelope in shipped {
            #expect(envelope.event.number == 1)
            break
        }
        await kernel.durableWorkSettled()
        #expect(kernel.sharedState[.fixtureOrders] == 1)
        #expect(try await kernel.undeliveredEvents(limit: 100).isEmpty)
        await kernel.shutdown()
    }
}
