// Modules the isolation tests run in processes of their own: the `state-writer` executable serves them
// (`IsolatedModuleProcess.serveIfAsked(IsolationFixtures.catalog)`), and the tests' hosts list the same catalog.
// Each that traps does so at one place, so that a test knows where a crash came from.
import Foundation
public import Mosaic
public import MosaicKernel
import MosaicWeb

/// The fixture modules, by identifier, and the catalog that holds them all.
public enum IsolationFixtures {
    /// Isolated by its manifest: a widget that says which process built it, and a link that succeeds.
    public static let echo: ModuleID = "com.fixture.echo"
    /// Traps building its widget's content (isolated by the host, not its manifest).
    public static let trapsInContent: ModuleID = "com.fixture.traps-in-content"
    /// Traps in `activate`.
    public static let trapsInActivate: ModuleID = "com.fixture.traps-in-activate"
    /// Traps handling its link.
    public static let trapsInLink: ModuleID = "com.fixture.traps-in-link"
    /// Traps answering its route, `GET /api/trap`.
    public static let trapsInRoute: ModuleID = "com.fixture.traps-in-route"
    /// Throws in `activate`: a failure the module's process reports, not a crash.
    public static let throwsInActivate: ModuleID = "com.fixture.throws-in-activate"
    /// Contributes content that is not `Codable` to ``opaquePoint``.
    public static let opaque: ModuleID = "com.fixture.opaque"

    /// The executable that serves these modules (`state-writer`), built beside the tests.
    public static func server() -> String? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
        ].map { $0.appendingPathComponent("state-writer").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether these tests run under the thread sanitizer (`Scripts/thread-sanitizer/run.sh` builds with
    /// MOSAIC_TSAN). There, Foundation's `Process` left exited children unreaped (zombies, their termination
    /// handler never run, every thread idle), so the tests of isolated modules, which wait for a child's end, run in
    /// the unsanitized run only.
    public static let underThreadSanitizer: Bool = {
        #if MOSAIC_TSAN
            true
        #else
            false
        #endif
    }()

    /// Why the tests of isolated modules do not run under the thread sanitizer.
    public static let sanitizerReason =
        "under the thread sanitizer Foundation's Process did not reap exited children, so no child's end is seen"

    /// What the trapping modules write before they trap, which a crash report carries.
    public static let trapMessage = "planted trap"

    /// Content that cannot cross between processes: it holds a closure.
    public struct Opaque: Sendable {
        /// Work that cannot be encoded.
        public let run: @Sendable () -> Void
    }

    /// A point whose content is ``Opaque``.
    public static let opaquePoint = ExtensionPoint<Opaque>(id: "fixture.opaque")

    /// Every fixture module.
    public static var catalog: ModuleCatalog {
        var catalog = ModuleCatalog()
        catalog.add(
            module(echo, isolation: .process) { module in
                module.contribute(to: .dashboardWidgets, id: "process", title: "Process") {
                    Panel(.text("served by process \(getpid())"))
                }
                module.handle(feature: "echo") { _, _ in }
                module.route(.get, "/echo/:word") { request in
                    .json("{\"word\":\"\(request.parameters["word"] ?? "")\",\"process\":\(getpid())}")
                }
            })
        catalog.add(
            module(trapsInContent) { module in
                module.contribute(to: .dashboardWidgets, id: "trap", title: "Trap") { () -> Panel in
                    fatalError(trapMessage)
                }
            })
        catalog.add(module(trapsInActivate, activate: { _ in fatalError(trapMessage) }) { _ in })
        catalog.add(
            module(trapsInLink) { module in
                module.handle(feature: "trap") { _, _ in fatalError(trapMessage) }
            })
        catalog.add(
            module(trapsInRoute) { module in
                module.route(.get, "/trap") { (_: WebRequest) -> WebResponse in fatalError(trapMessage) }
            })
        catalog.add(module(throwsInActivate, activate: { _ in throw Refusal() }) { _ in })
        catalog.add(
            module(opaque) { module in
                module.contribute(to: opaquePoint, id: "opaque") { Opaque(run: {}) }
            })
        for factory in sharingModules + durableModules { catalog.add(factory) }
        return catalog
    }

    private struct Refusal: Error, CustomStringConvertible {
        var description: String { "the fixture refuses to start" }
    }

    static func module(
        _ id: ModuleID, isolation: ModuleIsolation = .inProcess,
        activate: @escaping @Sendable (ActivationContext) async throws -> Void = { _ in },
        register: @escaping @Sendable (inout ModuleRegistrar) -> Void
    ) -> ModuleFactory {
        ModuleFactory(manifest: Manifest(id: id, version: "1.0.0", isolation: isolation), register: register) {
            Fixture(start: activate)
        }
    }

    private struct Fixture: Module {
        static let manifest = Manifest(id: "com.fixture.unused", version: "1.0.0")
        var start: @Sendable (ActivationContext) async throws -> Void = { _ in }
        init() {}
        init(start: @escaping @Sendable (ActivationContext) async throws -> Void) { self.start = start }
        func activate(_ context: ActivationContext) async throws { try await start(context) }
    }
}
