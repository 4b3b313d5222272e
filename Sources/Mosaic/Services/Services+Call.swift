internal import Instrumentation

extension Services {
    /// Runs `operation` as a call of this module's code: with these services as ``current``, so that `@Injected`
    /// resolves from them and `Logger.MetadataProvider.mosaicModule` names the module in its log lines; and, when
    /// the calling task has a `ServiceContext` (a tracer's span, a traced request), that context with the module
    /// named in it (`ServiceContext.mosaicModule`), so that the spans made in the call are the module's.
    ///
    /// A caller without a `ServiceContext` (a host that does not trace) passes none on: the module's code then
    /// sees `ServiceContext.current == nil`, and the call sets one task-local value, not two.
    package func call<R>(_ operation: () async throws -> R) async throws -> R {
        guard var context = ServiceContext.current else {
            return try await Services.$current.withValue(self, operation: operation)
        }
        context.mosaicModule = module
        return try await ServiceContext.$current.withValue(context) {
            try await Services.$current.withValue(self, operation: operation)
        }
    }
}

/// The host's task-local context where it was made, to return to from inside a module's call: what a module hands
/// back to the host (a middleware's `next`) is not that module's code, so it runs with the host's `ServiceContext`
/// and without the module's services. Otherwise the host's logs and spans further down would name the module, and
/// `@Injected` values made there would resolve as the module.
package struct HostContext: Sendable {
    private let serviceContext: ServiceContext?

    /// The context of the current task, which must be the host's (outside any module's call).
    package init() { serviceContext = ServiceContext.current }

    /// Runs `operation` in this context.
    package func run<R>(_ operation: () async throws -> R) async throws -> R {
        // Where the host had no `ServiceContext`, a module's call set none either; unless the module's code set one
        // of its own around the call it returns through (a span of its own), only its services are taken back.
        guard serviceContext != nil || ServiceContext.current != nil else {
            return try await Services.$current.withValue(nil, operation: operation)
        }
        return try await ServiceContext.$current.withValue(serviceContext) {
            try await Services.$current.withValue(nil, operation: operation)
        }
    }
}
