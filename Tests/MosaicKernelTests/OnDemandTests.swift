import Mosaic
import MosaicKernel
import Testing

/// An event an on-demand module subscribes to.
struct Ping: Sendable {}

/// A module that starts on demand: it handles `scores` links, contributes a tab and a widget, and says when it
/// activates.
func onDemandModule(
    _ id: ModuleID = "com.app.sports", entitlements: Set<Entitlement> = [], log: EventLog,
    onActivate: @escaping @Sendable (ActivationContext) async throws -> Void = { _ in }
) -> ModuleFactory {
    serviceModule(id, entitlements: entitlements, log: log, onActivate: onActivate) { module in
        module.activation = .onDemand
        module.tab("sports", title: "Sports")
        module.contribute(to: .dashboardWidgets, id: "scores", title: "Scores") { Panel(.text("2 – 1")) }
        module.handle(feature: "scores") { _, _ in }
        module.subscribes(to: Ping.self)
    }
}

@Suite(.timeLimit(.minutes(1))) struct OnDemandTests {
    @Test("an on-demand module waits on standby after boot, says what starts it, and runs no code of its own")
    func standbyAfterBoot() async throws {
        let log = EventLog()
        let kernel = makeKernel([onDemandModule(log: log), probe("com.app.bystander")])
        let report = try await kernel.boot()
        #expect(report["com.app.sports"]?.state == .standby)
        #expect(log.all.isEmpty, "its activate(_:) did not run")
        #expect(report.isClean, "\(report.table)")
        let triggers = try #require(report["com.app.sports"]?.startTriggers)
        #expect(triggers.contains("a link to scores"))
        #expect(triggers.contains("the content of scores in mosaic.dashboard-widgets"))
        #expect(!triggers.contains { $0.contains("mosaic.tabs") }, "a tab shows without starting it")
        #expect(report.table.contains("starts on: a link to scores"))
        // The tab is listed and built without starting the module.
        let tabs = kernel.contributions(for: .tabs)
        #expect(tabs.map(\.id) == ["sports"])
        #expect(try await tabs.first?.content().target == "ghost://sports")
        #expect(await kernel.state(of: "com.app.sports") == .standby)
        await kernel.shutdown()
    }

    @Test("an on-demand module that nothing in the app starts is a warning, naming the fix")
    func unstartableIsWarned() {
        let diagnostics = Kernel.validate(
            catalog([serviceModule("com.app.idle") { $0.activation = .onDemand }]), host: testHost)
        let warning = diagnostics.first { $0.code == .startsOnDemand }
        #expect(warning?.severity == .warning)
        #expect(warning?.fix.contains("Kernel.start(_:)") == true)
        let started = Kernel.validate(catalog([onDemandModule(log: EventLog())]), host: testHost)
        #expect(!started.contains { $0.code == .startsOnDemand }, "a module a link starts is fine")
    }

    @Test("a link it handles starts it, and the link is handled by it")
    func linkStartsIt() async throws {
        let log = EventLog()
        let kernel = makeKernel([onDemandModule(log: log)])
        try await kernel.boot()
        let result = await kernel.open("ghost://sports/scores")
        guard case .handled(_, let module) = result else {
            Issue.record("the link was not handled: \(result)")
            return
        }
        #expect(module == "com.app.sports")
        #expect(log.activations == ["com.app.sports"])
        let report = await kernel.report()
        #expect(report["com.app.sports"]?.state == .active)
        #expect(report["com.app.sports"]?.cause == .demand("a link to scores"))
        #expect(report["com.app.sports"]?.startTriggers == [])
        await kernel.shutdown()
    }

    @Test("building a contribution's content starts it, and the content is the started module's")
    func contentStartsIt() async throws {
        let log = EventLog()
        let kernel = makeKernel([onDemandModule(log: log)])
        try await kernel.boot()
        let widgets = kernel.contributions(for: .dashboardWidgets)
        #expect(widgets.map(\.id) == ["scores"], "listed while on standby")
        #expect(try await widgets.first?.content() == Panel(.text("2 – 1")))
        #expect(await kernel.state(of: "com.app.sports") == .active)
        #expect(log.activations == ["com.app.sports"])
        #expect(kernel.contributions(for: .dashboardWidgets).map(\.id) == ["scores"], "listed once, now live")
        await kernel.shutdown()
    }

    @Test("a module that requires it starts it first; Kernel.start starts one by name")
    func requiredAndNamedStarts() async throws {
        let log = EventLog()
        let kernel = makeKernel([
            onDemandModule(log: log),
            serviceModule("com.app.art", log: log) { $0.activation = .onDemand },
            serviceModule("com.app.dashboard", requires: [.module("com.app.sports")], log: log) { _ in },
        ])
        let report = try await kernel.boot()
        #expect(report["com.app.sports"]?.state == .active, "required by a module that starts at boot")
        #expect(report["com.app.art"]?.state == .standby)
        #expect(log.activations == ["com.app.sports", "com.app.dashboard"])
        #expect(try await kernel.start("com.app.art") == .active)
        #expect(try await kernel.start("com.app.art") == .active, "starting an active module changes nothing")
        #expect(log.activations.count == 3)
        await #expect(throws: KernelError.self) { try await kernel.start("com.app.none") }
        await kernel.shutdown()
    }

    @Test("an event it subscribes to starts it")
    func eventStartsIt() async throws {
        let log = EventLog()
        let kernel = makeKernel([onDemandModule(log: log)])
        try await kernel.boot()
        let changes = kernel.stateChanges()
        try kernel.events.publish(Ping())
        for await change in changes where change.id == "com.app.sports" && change.to == .active { break }
        #expect(await kernel.state(of: "com.app.sports") == .active)
        await kernel.shutdown()
    }

    @Test("a module that fails to start on demand gives its first caller the reason; the host and others stay up")
    func failedStartAnswersTheCaller() async throws {
        let log = EventLog()
        let kernel = makeKernel([
            onDemandModule(log: log) { _ in throw DataMissing() }, probe("com.app.bystander"),
        ])
        try await kernel.boot()
        let widget = try #require(kernel.contributions(for: .dashboardWidgets).first)
        let refused = await #expect(throws: ModuleUnavailableError.self) { try await widget.content() }
        #expect(refused?.code == .notStarted)
        #expect(refused?.message.contains("forecast.json is missing") == true, "\(String(describing: refused))")
        #expect(kernel.contributions(for: .dashboardWidgets).isEmpty, "a failed module's contributions go")
        guard case .notHandled(let error) = await kernel.open("ghost://sports/scores") else {
            Issue.record("a link to a module that failed to start must not be handled")
            return
        }
        #expect(error.code == .moduleInactive)
        #expect(error.message.contains("forecast.json is missing"), "\(error.message)")
        #expect(await kernel.state(of: "com.app.sports")?.name == "failed")
        #expect(await kernel.state(of: "com.app.bystander")?.isActive == true)
        await kernel.shutdown()
    }

    @Test("revoked, it is deactivated and releases what it held; granted again, it waits on standby again")
    func revokeAndGrant() async throws {
        let log = EventLog()
        let kernel = makeKernel([onDemandModule(entitlements: ["sports"], log: log)], entitlements: ["sports"])
        try await kernel.boot()
        #expect(try await kernel.start("com.app.sports") == .active)
        try await kernel.revoke("sports")
        #expect(log.deactivations == ["com.app.sports"])
        #expect(await kernel.state(of: "com.app.sports")?.name == "blocked")
        #expect(kernel.contributions(for: .dashboardWidgets).isEmpty)
        try await kernel.grant("sports")
        #expect(await kernel.state(of: "com.app.sports") == .standby)
        #expect(kernel.contributions(for: .dashboardWidgets).map(\.id) == ["scores"])
        #expect(log.activations == ["com.app.sports"], "not started again until used")
        await kernel.shutdown()
    }
}
