// Modules that share state and events with their host from a process of their own.
import Foundation
public import Mosaic
import MosaicKernel

extension StateKey where Value == Int {
    /// Written by ``IsolationFixtures/sharer`` from its process.
    public static let fixtureCounter = StateKey("fixture.counter", initial: 0)
}

extension StateKey where Value == String {
    /// Written by the host; ``IsolationFixtures/sharer`` reads and observes it, and may not write it.
    public static let fixtureMessage = StateKey("fixture.message", initial: "")
    /// Written by ``IsolationFixtures/sharer`` in a transaction with the counter.
    public static let fixtureLog = StateKey("fixture.log", initial: "")
    /// Declared by no fixture.
    public static let fixtureStray = StateKey("fixture.stray", initial: "")
    /// ``IsolationFixtures/trapsInObserver`` traps when it holds "trap".
    public static let fixtureTrigger = StateKey("fixture.trigger", initial: "")
}

extension ConfigurationKey where Value == String {
    /// Required: ``IsolationFixtures/configured`` reports each value it sees.
    public static var fixtureGreeting: Self { ConfigurationKey("greeting") }
}

/// What the sharing fixtures tell the host, as events.
public struct FixtureReport: Codable, Sendable, Equatable {
    /// What the module says.
    public let text: String
    /// A report saying `text`.
    public init(_ text: String) { self.text = text }
}

/// What the host tells the sharing fixtures, as events.
public struct FixtureRequest: Codable, Sendable, Equatable {
    /// What the host asks; a report's text starts with it.
    public let text: String
    /// A request saying `text`.
    public init(_ text: String) { self.text = text }
}

/// A thrown error of a fixture's link: what it read was not what it wrote.
struct Mismatch: Error, CustomStringConvertible {
    let description: String
}

extension IsolationFixtures {
    /// Writes the counter (its links `increment`, `transfer`, `stray` and `message`), answers each
    /// ``FixtureRequest`` with a ``FixtureReport`` of what it reads, and reports each message it observes.
    public static let sharer: ModuleID = "com.fixture.sharer"
    /// Traps in its observer of ``Swift/String/fixtureTrigger`` when the host sets it to "trap".
    public static let trapsInObserver: ModuleID = "com.fixture.traps-in-observer"
    /// Traps in its handler of ``FixtureRequest`` events.
    public static let trapsInHandler: ModuleID = "com.fixture.traps-in-handler"
    /// Reports each `backgroundRefresh` and `launched` host event it runs in, with its process id; its participant
    /// in the phase `failing` throws.
    public static let phased: ModuleID = "com.fixture.phased"
    /// Reports each value of its required configuration key ``Swift/String/fixtureGreeting`` it sees.
    public static let configured: ModuleID = "com.fixture.configured"

    static var sharingModules: [ModuleFactory] {
        [
            module(sharer, activate: reportWhatIsRead, register: registerSharer),
            module(trapsInObserver, activate: trapOnTrigger, register: { $0.reads(.fixtureTrigger) }),
            module(trapsInHandler, activate: trapOnRequest, register: { $0.subscribes(to: FixtureRequest.self) }),
            module(phased) { module in
                module.publishes(FixtureReport.self)
                module.participate(in: .backgroundRefresh) { context in
                    try context.events.publish(FixtureReport("refreshed in \(getpid())"))
                }
                module.participate(in: "failing") { _ in throw Mismatch(description: "the fixture's phase fails") }
                module.listen(to: .launched) { _, context in
                    try context.events.publish(FixtureReport("launched in \(getpid())"))
                }
            },
            module(configured, activate: reportGreetings) { module in
                module.configuration(.fixtureGreeting)
                module.publishes(FixtureReport.self)
            },
        ]
    }

    private static func registerSharer(_ module: inout ModuleRegistrar) {
        module.writes(.fixtureCounter)
        module.writes(.fixtureLog)
        module.reads(.fixtureMessage)
        module.publishes(FixtureReport.self)
        module.subscribes(to: FixtureRequest.self)
        module.handle(feature: "increment") { _, context in
            let before = context.state[.fixtureCounter]
            try await context.state.update(.fixtureCounter) { $0 += 1 }
            let after = context.state[.fixtureCounter]
            guard after > before else { throw Mismatch(description: "read \(after) after writing") }
        }
        module.handle(feature: "transfer") { _, context in
            try await context.state.transaction { transaction in
                transaction.update(.fixtureCounter) { $0 += 10 }
                transaction.update(.fixtureLog) { $0 += "+10" }
            }
        }
        module.handle(feature: "stray") { _, context in try await context.state.set(.fixtureStray, to: "written") }
        module.handle(feature: "message") { _, context in
            try await context.state.set(.fixtureMessage, to: "written by the module")
        }
    }

    /// Answers each request with what the module reads, and reports each message it observes. Each subscription is
    /// made before activation returns, so that what the host sends once the module is active reaches it.
    private static func reportWhatIsRead(_ context: ActivationContext) {
        let requests = context.events.subscribe(to: FixtureRequest.self)
        context.task {
            for await request in requests {
                let read = "counter=\(context.state[.fixtureCounter]) log=\(context.state[.fixtureLog])"
                try context.events.publish(FixtureReport("\(request.event.text): \(read)"))
            }
        }
        let messages = context.state.values(of: .fixtureMessage)
        context.task {
            for await message in messages { try context.events.publish(FixtureReport("observed \(message)")) }
        }
    }

    private static func reportGreetings(_ context: ActivationContext) throws {
        let greetings = try context.configuration.updates(of: .fixtureGreeting)
        context.task {
            for await greeting in greetings { try context.events.publish(FixtureReport("greeting=\(greeting)")) }
        }
    }

    private static func trapOnTrigger(_ context: ActivationContext) {
        let triggers = context.state.values(of: .fixtureTrigger)
        context.task {
            for await trigger in triggers where trigger == "trap" { fatalError(trapMessage) }
        }
    }

    private static func trapOnRequest(_ context: ActivationContext) {
        let requests = context.events.subscribe(to: FixtureRequest.self)
        context.task {
            for await _ in requests { fatalError(trapMessage) }
        }
    }
}
