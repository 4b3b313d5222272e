internal import Instrumentation
internal import Synchronization

/// One run of a module's code by the kernel (its activation, a link handler, a content build, a participant, a
/// task), where `@Injected` records a failure it cannot throw: the kernel fails the call with it when the code
/// returns, instead of the process stopping.
package final class ModuleCall: Sendable {
    /// The call the current task runs in, if any.
    @TaskLocal package static var current: ModuleCall?

    private let failure = Locked<ServiceError?>(nil)

    package init() {}

    /// Keeps the first failure of the call.
    package func record(_ error: ServiceError) {
        failure.withLock { if $0 == nil { $0 = error } }
    }

    /// The first failure recorded, if any.
    package var recorded: ServiceError? { failure.withLock { $0 } }
}

extension Services {
    /// Runs `operation` as a call of this module's code: with these services as ``current`` (for `@Injected`),
    /// and failing with the first service failure `@Injected` recorded in it, even when `operation` returned. The
    /// task-local `ServiceContext` names the module meanwhile (`ServiceContext.mosaicModule`).
    package func call<R>(_ operation: () async throws -> R) async throws -> R {
        let call = ModuleCall()
        let serviceContext: ServiceContext
        if var current = ServiceContext.current {
            current.mosaicModule = module
            serviceContext = current
        } else {
            serviceContext = callContext
        }
        let result = try await ServiceContext.$current.withValue(serviceContext) {
            try await ModuleCall.$current.withValue(call) {
                try await Self.$current.withValue(self, operation: operation)
            }
        }
        if let failure = call.recorded { throw failure }
        return result
    }
}

/// The host's task-local context where it was made, to return to from inside a module's call: what a module hands
/// back to the host (a middleware's `next`) is not that module's code, so it runs with the host's `ServiceContext`
/// and without the module's services or call. Otherwise the host's logs and spans further down would name the
/// module, and `@Injected` failures there would fail it.
package struct HostContext: Sendable {
    private let serviceContext: ServiceContext?

    /// The context of the current task, which must be the host's (outside any module's call).
    package init() { serviceContext = ServiceContext.current }

    /// Runs `operation` in this context.
    package func run<R>(_ operation: () async throws -> R) async throws -> R {
        try await ServiceContext.$current.withValue(serviceContext) {
            try await ModuleCall.$current.withValue(nil) {
                try await Services.$current.withValue(nil, operation: operation)
            }
        }
    }
}
