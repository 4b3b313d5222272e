internal import Instrumentation

extension Services {
    /// Runs `operation` as a call of this module's code: with these services as ``current`` (for `@Injected`),
    /// and the task-local `ServiceContext` naming the module (`ServiceContext.mosaicModule`).
    package func call<R>(_ operation: () async throws -> R) async throws -> R {
        let serviceContext: ServiceContext
        if var current = ServiceContext.current {
            current.mosaicModule = module
            serviceContext = current
        } else {
            serviceContext = callContext
        }
        return try await ServiceContext.$current.withValue(serviceContext) {
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
        try await ServiceContext.$current.withValue(serviceContext) {
            try await Services.$current.withValue(nil, operation: operation)
        }
    }
}
