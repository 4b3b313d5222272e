import Configuration
import Foundation
import IsolationFixtures
import Mosaic
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Testing

/// A module in process beside the isolated ones, whose widget must keep answering whatever they do.
let bystander: ModuleFactory = serviceModule("com.app.bystander") { module in
    module.contribute(to: .dashboardWidgets, id: "steady", title: "Steady") { Panel(.text("steady")) }
}

/// A kernel over the fixture modules `ids` and the bystander, on `clock`, whose isolated modules run in
/// `state-writer` processes; `hostIsolates` are isolated by the host (the others by their manifests, or not at all);
/// `configuration` is where the host reads the modules' configuration.
func isolatingKernel(
    _ ids: [ModuleID], hostIsolates: Set<ModuleID> = [], clock: ManualClock,
    configuration: [any ConfigProvider] = [], adjust: (inout IsolationOptions) -> Void = { _ in }
) throws -> Kernel {
    var options = KernelOptions(clock: clock)
    options.configurationProviders = configuration
    options.isolation.executable = try stateWriter().path
    options.isolation.modules = hostIsolates
    // Heartbeats of their own only where a test moves the clock for them.
    options.isolation.heartbeatInterval = .seconds(3_600)
    adjust(&options.isolation)
    let fixtures = IsolationFixtures.catalog.entries.filter { ids.contains($0.manifest.id) }.map(\.factory)
    return Kernel(
        catalog: catalog(fixtures + [bystander]), host: testHost,
        extensionPoints: [AnyExtensionPoint(IsolationFixtures.opaquePoint), AnyExtensionPoint(.webRoutes)],
        options: options, logger: quietLogger)
}

extension Kernel {
    /// Module `id`'s state once `done` holds for it (now, or at a later change).
    func state(of id: ModuleID, once done: (ModuleState) -> Bool) async -> ModuleState? {
        let changes = stateChanges()
        if let now = state(of: id), done(now) { return now }
        for await change in changes where change.id == id && done(change.to) { return change.to }
        return nil
    }

    /// The text of `module`'s widget; throws what building it threw.
    nonisolated func widgetText(of module: ModuleID) async throws -> String? {
        guard let widget = contributions(for: .dashboardWidgets).first(where: { $0.module == module }) else {
            return nil
        }
        return try await widget.content().blocks.first.flatMap { block in
            if case .text(let text) = block { text } else { nil }
        }
    }

    /// `module`'s route, as the host keeps it.
    nonisolated func route(of module: ModuleID) async throws -> WebRoute? {
        try await contributions(for: .webRoutes).first { $0.module == module }?.content()
    }

    nonisolated func status(of id: ModuleID) -> IsolatedModuleStatus? {
        isolatedModules().first { $0.module == id }
    }
}

extension ModuleState {
    var isFailed: Bool { name == "failed" }
}

@Suite(
    .timeLimit(.minutes(1)),
    .disabled(if: IsolationFixtures.underThreadSanitizer, Comment(rawValue: IsolationFixtures.sanitizerReason)))
struct IsolationTests {
    @Test("an isolated module's widget is built in its own process, and its link handled there")
    func servedFromItsProcess() async throws {
        let kernel = try isolatingKernel([IsolationFixtures.echo], clock: ManualClock())
        let report = try await kernel.boot()
        #expect(report[IsolationFixtures.echo]?.state.isActive == true, "\(report)")
        let pid = try #require(kernel.status(of: IsolationFixtures.echo)?.processIdentifier)
        #expect(pid != getpid())
        #expect(await kernel.report()[IsolationFixtures.echo]?.processSummary == "process \(pid), 0 restarts")
        #expect(try await kernel.widgetText(of: IsolationFixtures.echo) == "served by process \(pid)")
        let outcome = await kernel.open("ghost://dashboard/echo")
        #expect(outcome == .handled(tab: "dashboard", module: IsolationFixtures.echo), "\(outcome)")
        await kernel.shutdown()
        #expect(kill(pid, 0) != 0, "shutdown ends the module's process")
    }

    @Test("no module's process holds the write end of any isolated module's input, so each sees its host leave")
    func inputsAreNotInherited() async throws {
        let other = IsolationFixtures.trapsInLink
        let kernel = try isolatingKernel([IsolationFixtures.echo, other], hostIsolates: [other], clock: ManualClock())
        try await kernel.boot()
        let pids = kernel.isolatedModules().compactMap(\.processIdentifier)
        #expect(pids.count == 2)
        func link(_ pid: Int32, _ fd: String) -> String? {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")
        }
        let inputs = Set(pids.compactMap { link($0, "0") })
        for pid in pids {
            let writers = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").filter { fd in
                guard let target = link(pid, fd), inputs.contains(target),
                    let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                    let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                    let mode = flags.split(separator: "\t").last.flatMap({ Int($0, radix: 8) })
                else { return false }
                return mode & 3 != 0
            }
            #expect(writers.isEmpty, "process \(pid) holds the write end of an input as its descriptors \(writers)")
        }
        await kernel.shutdown()
    }

    @Test("a trap building a widget fails that module alone, with the signal and its last words, then it restarts")
    func trapInContent() async throws {
        let clock = ManualClock()
        let trapper = IsolationFixtures.trapsInContent
        let kernel = try isolatingKernel([trapper], hostIsolates: [trapper], clock: clock)
        try await kernel.boot()
        let first = try #require(kernel.status(of: trapper)?.processIdentifier)
        await #expect(throws: (any Error).self) { try await kernel.widgetText(of: trapper) }
        let failed = try #require(await kernel.state(of: trapper, once: \.isFailed))
        #expect(failed.reason?.contains("signal") == true, "\(failed)")
        #expect(failed.reason?.contains(IsolationFixtures.trapMessage) == true, "\(failed)")
        #expect(kernel.contributions(for: .dashboardWidgets).map(\.module) == ["com.app.bystander"])
        #expect(try await kernel.widgetText(of: "com.app.bystander") == "steady")
        #expect(await kernel.diagnostics.with(.processEnded).count == 1)

        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(await kernel.state(of: trapper, once: \.isActive) != nil)
        let status = try #require(kernel.status(of: trapper))
        #expect(status.restarts == 1)
        #expect(status.processIdentifier != nil && status.processIdentifier != first)
        #expect(status.lastCrash?.contains(IsolationFixtures.trapMessage) == true)
        #expect(kernel.contributions(for: .dashboardWidgets).count == 2, "its widget is back")
        await kernel.shutdown()
    }

    @Test("the fourth crash in the restart window leaves the module failed, until an operator restarts it")
    func restartBudget() async throws {
        let clock = ManualClock()
        let trapper = IsolationFixtures.trapsInActivate
        let kernel = try isolatingKernel([trapper], hostIsolates: [trapper], clock: clock)
        let report = try await kernel.boot()
        #expect(report[trapper]?.state.isFailed == true, "\(report)")
        #expect(report["com.app.bystander"]?.state.isActive == true)
        for restart in 1...3 {
            let delay = Duration.seconds(1 << (restart - 1))
            await clock.sleepers(reaching: 1, dueWithin: delay)
            clock.advance(by: delay)
            // It restarts, traps again in `activate`, and the next restart waits twice as long.
            _ = await kernel.state(of: trapper) { _ in kernel.status(of: trapper)?.crashesInWindow == restart + 1 }
        }
        let status = try #require(kernel.status(of: trapper))
        #expect(status.restarts == 3)
        #expect(status.crashesInWindow == 4)
        #expect(await kernel.state(of: trapper)?.isFailed == true)
        #expect(try await kernel.widgetText(of: "com.app.bystander") == "steady")

        // An operator's restart forgets the budget and tries again: it traps again, a first crash in a new window.
        let again = try await kernel.restart(trapper)
        #expect(again.isFailed)
        #expect(kernel.status(of: trapper)?.crashesInWindow == 1)
        await kernel.shutdown()
    }

    @Test("a trap in a link handler answers the link at once with the reason, and fails only that module")
    func trapInLink() async throws {
        let trapper = IsolationFixtures.trapsInLink
        let kernel = try isolatingKernel([trapper], hostIsolates: [trapper], clock: ManualClock())
        try await kernel.boot()
        let outcome = await kernel.open("ghost://dashboard/trap")
        guard case .notHandled(let error) = outcome else {
            Issue.record("a link whose handler trapped was handled: \(outcome)")
            return
        }
        #expect("\(error)".contains(IsolationFixtures.trapMessage), "\(error)")
        #expect(await kernel.state(of: trapper, once: \.isFailed) != nil)
        #expect(try await kernel.widgetText(of: "com.app.bystander") == "steady")
        guard case .notHandled = await kernel.open("ghost://dashboard/trap") else {
            Issue.record("the link of a failed module was handled")
            return
        }
        await kernel.shutdown()
    }

    @Test("an isolated module's route answers from its process; one that traps refuses at once, as unavailable")
    func routes() async throws {
        let echo = IsolationFixtures.echo
        let trapper = IsolationFixtures.trapsInRoute
        let kernel = try isolatingKernel([echo, trapper], hostIsolates: [trapper], clock: ManualClock())
        try await kernel.boot()
        let pid = try #require(kernel.status(of: echo)?.processIdentifier)
        let route = try #require(try await kernel.route(of: echo))
        #expect(route.method == .get && route.path == "/echo/:word")
        let response = try await route.handle(
            WebRequest(method: "GET", path: "/echo/hello", parameters: ["word": "hello"]))
        #expect(response.status == 200 && response.body == "{\"word\":\"hello\",\"process\":\(pid)}", "\(response)")

        let trapping = try #require(try await kernel.route(of: trapper))
        do {
            _ = try await trapping.handle(WebRequest(method: "GET", path: "/trap"))
            Issue.record("a route that trapped answered")
        } catch let error as ModuleUnavailableError {
            #expect(error.code == .processEnded && error.module == trapper, "\(error)")
            #expect(error.message.contains(IsolationFixtures.trapMessage), "\(error)")
        }
        #expect(await kernel.state(of: trapper, once: \.isFailed) != nil)
        #expect(await kernel.state(of: echo)?.isActive == true)
        #expect(try await kernel.route(of: trapper) == nil, "its route leaves with it")
        await kernel.shutdown()
    }

    @Test("SIGKILL of a module's process fails it with the signal, and it comes back in a new process")
    func killed() async throws {
        let clock = ManualClock()
        let echo = IsolationFixtures.echo
        let kernel = try isolatingKernel([echo], clock: clock)
        try await kernel.boot()
        let first = try #require(kernel.status(of: echo)?.processIdentifier)
        #expect(kernel.killIsolatedProcess(of: echo))
        let failed = try #require(await kernel.state(of: echo, once: \.isFailed))
        #expect(failed.reason?.contains("SIGKILL") == true, "\(failed)")
        #expect(await kernel.open("ghost://dashboard/echo") != .handled(tab: "dashboard", module: echo))
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(await kernel.state(of: echo, once: \.isActive) != nil)
        let second = try #require(kernel.status(of: echo)?.processIdentifier)
        #expect(second != first)
        #expect(try await kernel.widgetText(of: echo) == "served by process \(second)")
        await kernel.shutdown()
    }

    @Test("a process stopped with SIGSTOP misses its heartbeat: it is killed, the module failed, and it restarts")
    func stopped() async throws {
        let clock = ManualClock()
        let echo = IsolationFixtures.echo
        let kernel = try isolatingKernel([echo], clock: clock) {
            $0.heartbeatInterval = .seconds(1)
            $0.heartbeatTimeLimit = .seconds(5)
        }
        try await kernel.boot()
        let first = try #require(kernel.status(of: echo)?.processIdentifier)
        // A heartbeat answered while the process runs keeps it.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        #expect(kernel.status(of: echo)?.processIdentifier == first)

        kill(first, SIGSTOP)
        clock.advance(by: .seconds(1))
        // The ping waits on its time limit (the one sleeper due within it), which then runs out.
        await clock.sleepers(reaching: 1, dueWithin: .seconds(5))
        clock.advance(by: .seconds(5))
        let failed = try #require(await kernel.state(of: echo, once: \.isFailed))
        #expect(failed.reason?.contains("missed its heartbeat") == true, "\(failed)")
        #expect(failed.reason?.contains("SIGKILL") == true, "\(failed)")
        await clock.sleepers(reaching: 1, dueWithin: .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(await kernel.state(of: echo, once: \.isActive) != nil)
        #expect(kernel.status(of: echo)?.processIdentifier != first)
        await kernel.shutdown()
    }

    @Test("content that is not Codable cannot cross: a boot diagnostic names the fix, and no process starts")
    func cannotCross() async throws {
        let opaque = IsolationFixtures.opaque
        let kernel = try isolatingKernel([opaque], hostIsolates: [opaque], clock: ManualClock())
        let report = try await kernel.boot()
        let diagnostic = try #require(report.diagnostics.with(.cannotCross).first)
        #expect(
            diagnostic.message.contains("Opaque") && diagnostic.message.contains("neither Codable nor CallableContent"),
            "\(diagnostic)")
        #expect(diagnostic.fix.contains("Codable"), "\(diagnostic)")
        #expect(report[opaque]?.state.isFailed == true)
        #expect(kernel.status(of: opaque)?.processIdentifier == nil)
        await kernel.shutdown()
    }

    @Test("an activation that throws in the module's process fails it as in process: no crash, no restart")
    func throwsInActivate() async throws {
        let module = IsolationFixtures.throwsInActivate
        let kernel = try isolatingKernel([module], hostIsolates: [module], clock: ManualClock())
        let report = try await kernel.boot()
        let state = try #require(report[module]?.state)
        #expect(state.isFailed && state.reason?.contains("the fixture refuses to start") == true, "\(state)")
        let status = try #require(kernel.status(of: module))
        #expect(status.restarts == 0 && status.crashesInWindow == 0 && status.lastCrash == nil)
        #expect(status.processIdentifier == nil)
        await kernel.shutdown()
    }

    @Test("a module the host asks to isolate that the catalog does not have is a boot warning naming it")
    func unknownIsolatedModule() async throws {
        let misspelt: ModuleID = "com.fixture.ecoh"
        let kernel = try isolatingKernel([], hostIsolates: [misspelt], clock: ManualClock())
        let report = try await kernel.boot()
        let diagnostic = try #require(report.diagnostics.with(.unknownIsolatedModule).first)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.message.contains("\(misspelt)") && diagnostic.message.contains("not in the catalog"))
        #expect(report["com.app.bystander"]?.state.isActive == true)
        await kernel.shutdown()
    }
}
