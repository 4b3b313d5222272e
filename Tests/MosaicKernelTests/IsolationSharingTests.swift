import Configuration
import Foundation
import IsolationFixtures
import Mosaic
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Testing

extension Kernel {
    /// Whether the echo module's page answers 200 from its process now.
    func echoAnswers() async throws -> Bool {
        guard let route = try await route(of: IsolationFixtures.echo) else { return false }
        let response = try await route.handle(
            WebRequest(method: "GET", path: "/echo/hello", parameters: ["word": "hello"]))
        return response.status == 200
    }
}

extension Feed where Element == EventEnvelope<FixtureReport> {
    /// The first report from now on whose text is `text`.
    func first(_ text: String) async -> EventEnvelope<FixtureReport>? {
        for await envelope in self where envelope.event.text == text { return envelope }
        return nil
    }
}

/// An event that cannot cross: it is not Codable.
struct Unencodable: Sendable {
    let run: @Sendable () -> Void
}

@Suite(
    .timeLimit(.minutes(1)),
    .disabled(if: IsolationFixtures.underThreadSanitizer, Comment(rawValue: IsolationFixtures.sanitizerReason)))
struct IsolationSharingTests {
    let sharer = IsolationFixtures.sharer

    @Test("an isolated module's writes and transactions are made by the host, and it reads what it wrote")
    func writes() async throws {
        let kernel = try isolatingKernel([sharer], hostIsolates: [sharer], clock: ManualClock())
        let report = try await kernel.boot()
        #expect(report[sharer]?.state.isActive == true, "\(report)")
        let reports = kernel.events.subscribe(to: FixtureReport.self)
        try await kernel.sharedState.set(.fixtureCounter, to: 5)

        // The module's link reads the counter back from its mirror after writing it, and throws if it is not new.
        #expect(await kernel.open("ghost://dashboard/increment") == .handled(tab: "dashboard", module: sharer))
        #expect(kernel.sharedState[.fixtureCounter] == 6)
        #expect(await kernel.open("ghost://dashboard/transfer") == .handled(tab: "dashboard", module: sharer))
        #expect(kernel.sharedState[.fixtureCounter] == 16)
        #expect(kernel.sharedState[.fixtureLog] == "+10")

        try kernel.events.publish(FixtureRequest("read"))
        let read = await reports.first("read: counter=16 log=+10")
        #expect(read?.sender == sharer)
        await kernel.shutdown()
    }

    @Test("a write of a key an isolated module did not declare it writes is refused as in process")
    func undeclaredWrites() async throws {
        let kernel = try isolatingKernel([sharer], hostIsolates: [sharer], clock: ManualClock())
        try await kernel.boot()
        for (link, key) in [("stray", "fixture.stray"), ("message", "fixture.message")] {
            guard case .notHandled(let error) = await kernel.open("ghost://dashboard/\(link)") else {
                Issue.record("the write of \(key), which the module did not declare, was made")
                continue
            }
            #expect("\(error)".contains("\(sharer) did not declare that it writes \(key)"), "\(error)")
        }
        #expect(kernel.sharedState[.fixtureStray] == "")
        #expect(kernel.sharedState[.fixtureMessage] == "")
        #expect(await kernel.state(of: sharer)?.isActive == true, "a refused write does not fail the module")
        await kernel.shutdown()
    }

    @Test("an isolated module's observer sees the host's changes, and its events cross both ways")
    func observersAndEvents() async throws {
        let kernel = try isolatingKernel([sharer], hostIsolates: [sharer], clock: ManualClock())
        try await kernel.boot()
        let reports = kernel.events.subscribe(to: FixtureReport.self)
        try await kernel.sharedState.set(.fixtureMessage, to: "hello")
        let observed = await reports.first("observed hello")
        #expect(observed?.sender == sharer)
        try kernel.events.publish(FixtureRequest("ping"))
        #expect(await reports.first("ping: counter=0 log=") != nil)
        await kernel.shutdown()
    }

    @Test("a trap in an isolated module's state observer fails it alone; it restarts with the host's values")
    func trapInObserver() async throws {
        let clock = ManualClock()
        let trapper = IsolationFixtures.trapsInObserver
        let modules = [trapper, sharer, IsolationFixtures.echo]
        let kernel = try isolatingKernel(modules, hostIsolates: [trapper, sharer], clock: clock)
        try await kernel.boot()
        let first = try #require(kernel.status(of: trapper)?.processIdentifier)
        #expect(try await kernel.echoAnswers())
        #expect(await kernel.open("ghost://dashboard/increment") == .handled(tab: "dashboard", module: sharer))

        try await kernel.sharedState.set(.fixtureTrigger, to: "trap")
        let failed = try #require(await kernel.state(of: trapper, once: \.isFailed))
        #expect(failed.reason?.contains("signal") == true, "\(failed)")
        #expect(failed.reason?.contains(IsolationFixtures.trapMessage) == true, "\(failed)")
        #expect(try await kernel.widgetText(of: "com.app.bystander") == "steady")
        #expect(try await kernel.echoAnswers())
        #expect(await kernel.open("ghost://dashboard/increment") == .handled(tab: "dashboard", module: sharer))
        #expect(kernel.sharedState[.fixtureCounter] == 2, "every acknowledged write stays")

        // It restarts with the host's value, which no longer makes it trap.
        try await kernel.sharedState.set(.fixtureTrigger, to: "calm")
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(await kernel.state(of: trapper, once: \.isActive) != nil)
        let second = try #require(kernel.status(of: trapper)?.processIdentifier)
        #expect(second != first)
        #expect(kernel.status(of: trapper)?.restarts == 1)
        await kernel.shutdown()
    }

    @Test("a trap in an isolated module's event handler fails it alone, and it restarts")
    func trapInHandler() async throws {
        let clock = ManualClock()
        let trapper = IsolationFixtures.trapsInHandler
        let modules = [trapper, sharer, IsolationFixtures.echo]
        let kernel = try isolatingKernel(modules, hostIsolates: [trapper, sharer], clock: clock)
        try await kernel.boot()
        let first = try #require(kernel.status(of: trapper)?.processIdentifier)
        let reports = kernel.events.subscribe(to: FixtureReport.self)

        try kernel.events.publish(FixtureRequest("trap"))
        let failed = try #require(await kernel.state(of: trapper, once: \.isFailed))
        #expect(failed.reason?.contains(IsolationFixtures.trapMessage) == true, "\(failed)")
        #expect(try await kernel.widgetText(of: "com.app.bystander") == "steady")
        #expect(try await kernel.echoAnswers())
        // The other isolated subscriber got the same event, and answers on.
        #expect(await reports.first("trap: counter=0 log=")?.sender == sharer)

        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(await kernel.state(of: trapper, once: \.isActive) != nil)
        #expect(kernel.status(of: trapper)?.processIdentifier != first)
        await kernel.shutdown()
    }

    @Test("events that are not Codable cannot cross: a boot diagnostic, and no process")
    func eventsThatCannotCross() async throws {
        let id: ModuleID = "com.app.receipts"
        let module = serviceModule(id) { module in
            module.subscribes(to: Unencodable.self)
        }
        var options = KernelOptions(clock: ManualClock())
        options.isolation.executable = try stateWriter().path
        options.isolation.modules = [id]
        let kernel = Kernel(catalog: catalog(module, bystander), host: testHost, options: options, logger: quietLogger)
        let report = try await kernel.boot()
        let messages = report.diagnostics.with(.cannotCross).map(\.message)
        #expect(messages.contains { $0.contains("not Codable") && $0.contains("Unencodable") }, "\(messages)")
        #expect(report[id]?.state.isFailed == true)
        #expect(kernel.status(of: id)?.processIdentifier == nil)
        await kernel.shutdown()
    }

    @Test("an isolated module's phase participants and host-event listeners run in its process; a failure is reported")
    func phasesAndHostEvents() async throws {
        let phased = IsolationFixtures.phased
        let kernel = try isolatingKernel([phased], hostIsolates: [phased], clock: ManualClock())
        let report = try await kernel.boot()
        #expect(report[phased]?.state.isActive == true, "\(report.diagnostics)")
        let child = try #require(kernel.status(of: phased)?.processIdentifier)
        let reports = kernel.events.subscribe(to: FixtureReport.self)

        let refresh = try await kernel.run(.backgroundRefresh)
        #expect(refresh.entries.map(\.outcome) == [.completed])
        #expect(await reports.first("refreshed in \(child)")?.sender == phased)
        let launched = try await kernel.send(HostEvent(.launched))
        #expect(launched.entries.map(\.outcome) == [.completed])
        #expect(await reports.first("launched in \(child)")?.sender == phased)

        let failing = try await kernel.run("failing")
        guard case .failed(let reason) = failing.entries.first?.outcome else {
            Issue.record("the failing participant was not reported: \(failing.entries)")
            return
        }
        #expect(reason.contains("the fixture's phase fails"), "\(reason)")
        #expect(await kernel.state(of: phased)?.isActive == true, "a failing participant does not fail the module")
        await kernel.shutdown()
    }

    @Test("an isolated module reads the configuration its host read for it, and each value the host reloads")
    func configuration() async throws {
        let configured = IsolationFixtures.configured
        let key = AbsoluteConfigKey(["com", "fixture", "configured", "greeting"])
        let provider = MutableInMemoryProvider(initialValues: [key: "hello"])
        let kernel = try isolatingKernel(
            [configured], hostIsolates: [configured], clock: ManualClock(), configuration: [provider])
        let reports = kernel.events.subscribe(to: FixtureReport.self)
        let report = try await kernel.boot()
        #expect(report[configured]?.state.isActive == true, "a required key without a default has its value there")
        #expect(await reports.first("greeting=hello")?.sender == configured)

        provider.setValue("bonjour", forKey: key)
        await kernel.reloadConfiguration()
        #expect(await reports.first("greeting=bonjour")?.sender == configured)
        await kernel.shutdown()
    }

    @Test("every write the host acknowledged outlives a SIGKILL of the writer's process, whose next one mirrors it")
    func killedWriter() async throws {
        let clock = ManualClock()
        let kernel = try isolatingKernel([sharer], hostIsolates: [sharer], clock: clock)
        try await kernel.boot()
        #expect(await kernel.open("ghost://dashboard/increment") == .handled(tab: "dashboard", module: sharer))
        #expect(await kernel.open("ghost://dashboard/transfer") == .handled(tab: "dashboard", module: sharer))
        #expect(kernel.killIsolatedProcess(of: sharer))
        #expect(await kernel.state(of: sharer, once: \.isFailed) != nil)
        #expect(kernel.sharedState[.fixtureCounter] == 11)

        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(await kernel.state(of: sharer, once: \.isActive) != nil)
        let reports = kernel.events.subscribe(to: FixtureReport.self)
        try kernel.events.publish(FixtureRequest("after"))
        #expect(await reports.first("after: counter=11 log=+10")?.sender == sharer)
        await kernel.shutdown()
    }
}
