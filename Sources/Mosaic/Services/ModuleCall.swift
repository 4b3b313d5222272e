internal import Instrumentation
internal import Synchronization

/// One run of a module's code by the kernel (its activation, a link handler, a content build, a participant, a
/// task), where `@Injected` records a failure it cannot throw: the kernel fails the call with it when the code
/// returns, instead of the process stopping.
package final class ModuleCall: Sendable {
    /// The call the current task runs in, if any.
    @TaskLocal package static var current: ModuleCall?

    private let failure = Mutex<ServiceError?>(nil)

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
        var serviceContext = ServiceContext.current ?? .topLevel
        serviceContext.mosaicModule = module
        let result = try await ServiceContext.$current.withValue(serviceContext) {
            try await ModuleCall.$current.withValue(call) {
                try await Self.$current.withValue(self, operation: operation)
            }
        }
        if let failure = call.recorded { throw failure }
        return result
    }
}
