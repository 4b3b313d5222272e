import Foundation
import Mosaic
import MosaicWeb
import Synchronization

/// What test routes and handlers were reached, by a marker each test makes unique, so parallel tests stay apart.
enum Reached {
    private static let markers = Locked<Set<String>>([])

    static func record(_ marker: String) { _ = markers.withLock { $0.insert(marker) } }
    static func contains(_ marker: String) -> Bool { markers.withLock { $0.contains(marker) } }
    /// The marker in a form body or query such as `note=abc&csrf=…`.
    static func record(form: String) {
        for field in form.split(separator: "&") where field.hasPrefix("note=") { record(String(field.dropFirst(5))) }
    }
}

struct Refusal: Error, CustomStringConvertible {
    var description: String { "secret detail: the database password is hunter2" }
}

/// Routes of every kind: CSRF-checked, exempt, throwing; plus a link handler that only navigates.
struct NotesModule: Module {
    static let manifest = Manifest(id: "com.test.notes", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.route(.post, "/notes") { request in
            Reached.record(form: request.body)
            return WebResponse(status: 201, body: "noted")
        }
        module.route(.delete, "/notes/:id") { request in
            Reached.record(request.parameters["id"] ?? "")
            return WebResponse(status: 204, body: "")
        }
        module.route(.post, "/hooks/notes", exemptFromCSRFCheck: true) { request in
            Reached.record(form: request.body)
            return WebResponse(body: "ok")
        }
        module.route(.get, "/fail") { _ in throw Refusal() }
        // Header fields that name the type, a security header, and one name twice in different case.
        module.route(.get, "/notes.csv") { _ in
            WebResponse(
                headers: ["content-type": "text/csv", "X-Frame-Options": "ALLOWALL", "X-Note": "1", "x-note": "2"],
                body: "note")
        }
        module.handle(feature: "crash") { _, _ in throw Refusal() }
        module.handle(feature: "peek", navigatesOnly: true) { link, _ in
            Reached.record(link.query.first { $0.name == "note" }?.value ?? "")
        }
    }
}

/// A service whose factory always throws.
struct Unbuildable: Sendable {}

extension ModuleRegistrar {
    /// Provides ``Unbuildable``, whose factory throws ``Refusal`` at every resolve.
    mutating func provideUnbuildable() {
        services.transient(ServiceKey(Unbuildable.self)) { () throws -> Unbuildable in throw Refusal() }
    }
}

/// Middleware whose service cannot be built, around a route that records that it ran.
struct BrokenMiddlewareModule: Module {
    static let manifest = Manifest(id: "com.test.broken-middleware", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.provideUnbuildable()
        module.middleware("auth") {
            (request: WebRequest, next: @Sendable (WebRequest) async throws -> WebResponse, _: Unbuildable) in
            try await next(request)
        }
        module.route(.get, "/guarded/:note") { request in
            Reached.record(request.parameters["note"] ?? "")
            return WebResponse(body: "secret")
        }
    }
}

/// A navigation item whose factory throws.
struct BrokenNavigationModule: Module {
    static let manifest = Manifest(id: "com.test.broken-navigation", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.contribute(to: .sidebar, id: "broken", title: "Broken") { () throws -> NavigationItem in
            throw Refusal()
        }
    }
}

/// A route whose service cannot be built.
struct BrokenRouteModule: Module {
    static let manifest = Manifest(id: "com.test.broken-route", version: "1.0.0")
    static func register(in module: inout ModuleRegistrar) {
        module.provideUnbuildable()
        module.route(.get, "/broken") { (_: WebRequest, _: Unbuildable) in WebResponse(body: "never") }
    }
}

/// A module whose writes meet a storage that did not answer in time: a route and a link handler.
struct StalledStorageModule: Module {
    static let manifest = Manifest(id: "com.test.stalled", version: "1.0.0")
    static let outage = StateError(.unavailable, "com.test.note waited for its storage past its time limit.")
    static func register(in module: inout ModuleRegistrar) {
        module.route(.post, "/stalled") { _ in throw outage }
        module.handle(feature: "stalled") { _, _ in throw outage }
    }
}
