// A module that publishes and handles durable events from a process of its own.
import Foundation
public import Mosaic
import MosaicKernel
import Synchronization

/// An order, published durably by ``IsolationFixtures/orders`` from its process; its handler there counts it.
public struct FixtureOrder: DurableEvent {
    /// The name of orders in the outbox.
    public static let durableName = "fixture.order"
    /// Which order it is.
    public let number: Int
    /// Whether the handler traps on the order's first attempt.
    public let trap: Bool
}

/// Published in the transaction of each order's handler, so with the order's count or not at all.
public struct FixtureShipped: DurableEvent {
    /// The name of shipments in the outbox.
    public static let durableName = "fixture.shipped"
    /// The order shipped.
    public let number: Int
}

extension StateKey where Value == Int {
    /// The orders ``IsolationFixtures/orders`` counted, each in its delivery's transaction.
    public static let fixtureOrders = StateKey("fixture.orders", initial: 0)
}

extension IsolationFixtures {
    /// Publishes a ``FixtureOrder`` per link `order` (`trap-order` for one its handler traps on at first), and counts
    /// each in a transactional durable handler that also publishes ``FixtureShipped``.
    public static let orders: ModuleID = "com.fixture.orders"

    static var durableModules: [ModuleFactory] {
        [module(orders, activate: countOrders, register: registerOrders)]
    }

    private static func registerOrders(_ module: inout ModuleRegistrar) {
        module.publishes(FixtureOrder.self)
        module.publishes(FixtureShipped.self)
        module.subscribes(to: FixtureOrder.self)
        module.writes(.fixtureOrders)
        let numbers = Counter()
        for (feature, trap) in [("order", false), ("trap-order", true)] {
            module.handle(feature: feature) { _, context in
                try await context.events.publish(FixtureOrder(number: numbers.next(), trap: trap))
            }
        }
    }

    private static func countOrders(_ context: ActivationContext) async throws {
        try await context.events.handle(FixtureOrder.self, as: "count") { envelope, transaction in
            if envelope.event.trap && envelope.attempt == 1 { fatalError(trapMessage) }
            transaction.update(.fixtureOrders) { $0 += 1 }
            transaction.publish(FixtureShipped(number: envelope.event.number))
        }
    }
}

/// The numbers of a process's orders, one after another.
private final class Counter: Sendable {
    private let last = Mutex(0)
    func next() -> Int {
        last.withLock {
            $0 += 1
            return $0
        }
    }
}
