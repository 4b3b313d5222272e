import Mosaic
import MosaicKernel
import MosaicTesting
import Synchronization
import Testing

protocol Tracking: Sendable {}

extension ServiceKey where Value == any Tracking {
    static var tracking: Self { Self() }
}

/// What the module stores and its service holds: objects of this Swift module, which the release check watches.
final class Notebook: Sendable {}
final class Tracker: Tracking {
    let notebook = Notebook()
}

struct Pinged: Sendable {}

/// A module that takes every kind of grant: a service it resolves through `@Injected`, a contribution, a link
/// handler, an event subscription read by a task, a state observer, and a stored object of its own.
struct GrabbyModule: Module {
    static let manifest = Manifest(id: "com.test.grabby", version: "1.0.0", entitlements: ["grabby"])
    static let visits = StateKey<Int>("com.test.grabby.visits", initial: 0)
    let notebook = Notebook()
    @Injected(.tracking) var tracker

    static func register(in module: inout ModuleRegistrar) {
        module.services.singleton(.tracking) { Tracker() }
        module.subscribes(to: Pinged.self)
        module.writes(visits)
        module.contribute(to: .dashboardWidgets, id: "grabby", title: "Grabby") { (tracker: any Tracking) in
            Panel(.text("\(type(of: tracker))"))
        }
        module.handle(feature: "grabby") { _, context in try await context.state.update(visits) { $0 += 1 } }
    }

    func activate(_ context: ActivationContext) async throws {
        let pings = context.events.subscribe(to: Pinged.self)
        let notebook = notebook
        context.task { for await _ in pings { _ = notebook } }
        let visits = context.state.values(of: Self.visits)
        context.task { for await _ in visits { _ = try tracker() } }
    }
}

/// Objects kept past their module's life, as a careless module would keep them.
let kept = Locked<[AnyObject]>([])

/// A module that leaves its service and its notebook in a global.
struct LeakyModule: Module {
    static let manifest = Manifest(id: "com.test.leaky", version: "1.0.0", entitlements: ["leaky"])
    let notebook = Notebook()
    @Injected(.tracking) var tracker

    static func register(in module: inout ModuleRegistrar) {
        module.services.singleton(.tracking) { Tracker() }
    }

    func activate(_ context: ActivationContext) async throws {
        let tracker = try tracker()
        kept.withLock { $0 += [notebook, tracker as AnyObject] }
    }
}

@Suite("Releases") struct ReleaseTests {
    @Test("a module that took every kind of grant leaves nothing of its own alive once revoked, or uninstalled")
    func everythingReleased() async throws {
        try await TestHarness(GrabbyModule.self).run { app in
            #expect(try await app.contents(of: .dashboardWidgets) == [Panel(.text("Tracker"))])
            #expect(await app.open("ghost://dashboard/grabby") == .handled(tab: "dashboard", module: "com.test.grabby"))
            try app.events.publish(Pinged())
            try await app.revoke("grabby")
            await app.expectReleased("com.test.grabby")
            try await app.grant("grabby")
            await app.expect("com.test.grabby", .active)
            try await app.kernel.uninstall("com.test.grabby")
            await app.expectReleased("com.test.grabby")
        }
    }

    @Test("what outlives a module is named: each type, how many, and what the kernel still holds")
    func leaksNamed() async throws {
        try await TestHarness(LeakyModule.self).run { app in
            await withKnownIssue {
                await app.expectReleased("com.test.leaky")
            } matching: {
                String(describing: $0).contains("com.test.leaky has not deactivated in this test")
            }
            try await app.revoke("leaky")
            await withKnownIssue {
                await app.expectReleased("com.test.leaky")
            } matching: { issue in
                let text = String(describing: issue)
                return text.contains(
                    "com.test.leaky left 2 × MosaicTestingTests.Notebook, 1 × MosaicTestingTests.Tracker alive")
                    && text.contains("The kernel holds nothing for it")
            }
        }
        kept.withLock { $0.removeAll() }
    }
}
