import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicTesting
import MosaicWeb
import Testing
import Tracing

/// A service a middleware resolves with `@Injected`, to show whose services its code runs with.
struct Stamp: Sendable {
    let text: String
}

/// A middleware that writes into the response what its own code sees of the task-local context: the
/// `ServiceContext`'s module, the module its log lines name, and whether an `@Injected` made in it resolves. Around
/// `next` it sets a context of its own, naming another module, which the host's code behind it must not see.
struct ContextObserverModule: Module {
    static let manifest = Manifest(id: "com.test.context-observer", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.services.transient(ServiceKey(Stamp.self)) { Stamp(text: "the observer's stamp") }
        module.middleware("observer") { request, next in
            @Injected(ServiceKey(Stamp.self)) var stamp
            var own = ServiceContext.current ?? .topLevel
            own.mosaicModule = "com.test.impostor"
            var response = try await ServiceContext.$current.withValue(own) { try await next(request) }
            response.headers["X-Seen-Context"] = ServiceContext.current?.mosaicModule?.rawValue ?? "none"
            let logged = Logger.MetadataProvider.mosaicModule.get()["mosaic.module"]
            response.headers["X-Seen-Log"] = logged.map { "\($0)" } ?? "none"
            response.headers["X-Seen-Injected"] = (try? stamp().text) ?? "unresolved"
            return response
        }
    }
}

/// What a module's middleware code sees of the task-local context, and what the host's code behind its `next` sees:
/// the semantics of a module call, where the `ServiceContext` is set only when the host's task has one.
@Suite("A middleware's task-local context")
struct WebMiddlewareContextTests {
    /// GETs `/dashboard` with the observer and a widget whose factory throws (so the web host logs a fault behind
    /// the middleware), in a task whose `ServiceContext` is `hostContext`; returns the response's headers and the
    /// `mosaic.module` of the host's fault log line.
    func dashboard(hostContext: ServiceContext?) async throws -> (seen: HTTPFields, hostLogModule: String?) {
        var handler = InMemoryLogHandler()
        handler.metadataProvider = .mosaicModule
        let (app, web) = try await ghostWeb(
            [ContextObserverModule.self, BrokenWidgetModule.self],
            logger: Logger(label: "test.web") { [handler] _ in handler })
        let headers = try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
            try await ServiceContext.$current.withValue(hostContext) {
                let page = try await client.get("/dashboard")
                #expect(page.status == 200)
                return page.headers
            }
        }
        await app.shutdown()
        let fault = try #require(handler.entries.first { "\($0.message)" == "A panel's factory threw" })
        return (headers, fault.metadata["mosaic.module"].map { "\($0)" })
    }

    @Test("without a host ServiceContext, a middleware's code has none; its services and log lines are its module's")
    func withoutHostContext() async throws {
        let (seen, hostLogModule) = try await dashboard(hostContext: nil)
        #expect(seen[HTTPField.Name("X-Seen-Context")!] == "none")
        #expect(seen[HTTPField.Name("X-Seen-Log")!] == "com.test.context-observer")
        #expect(seen[HTTPField.Name("X-Seen-Injected")!] == "the observer's stamp")
        // Behind `next`, the host's code names no module: neither the middleware's nor the context it set.
        #expect(hostLogModule == nil)
    }

    @Test("with a host ServiceContext, a middleware's code has it with its module named, and behind next the host's")
    func withHostContext() async throws {
        // The host's context names a module of its own, to tell it apart from the contexts module code sets.
        var host = ServiceContext.topLevel
        host.mosaicModule = "com.test.host-context"
        let (seen, hostLogModule) = try await dashboard(hostContext: host)
        #expect(seen[HTTPField.Name("X-Seen-Context")!] == "com.test.context-observer")
        #expect(seen[HTTPField.Name("X-Seen-Log")!] == "com.test.context-observer")
        #expect(seen[HTTPField.Name("X-Seen-Injected")!] == "the observer's stamp")
        // Behind `next`, the host's code runs with the host's context again, not the one the middleware set.
        #expect(hostLogModule == "com.test.host-context")
    }
}
