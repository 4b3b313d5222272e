internal import Instrumentation
internal import Synchronization

/// One run of a module's code by the kernel (its activation, a link handler, a content build, a participant, a
/// task), where `@Injected` records a failure it cannot throw: the kernel fails the call with it when the code
/// returns, instead of the process stopping.
package final class ModuleCall: Sendable {
    /// The call the current task runs in, if any.
    package static var current: ModuleCall? { ModuleScope.current.call }

    private let failure = Locked<ServiceError?>(nil)

    package init() {}

    /// Keeps the first failure of the call.
    package func record(_ error: ServiceError) {
        failure.withLock { if $0 == nil { $0 = error } }
    }

    /// The first failure recorded, if any.
    package var recorded: ServiceError? { failure.withLock { $0 } }
}

/// The module code the current task runs: its services (for `@Injected`) and its call. One task-local value for both,
/// so that entering a module's code and returning to the host's (a middleware and its `next`, on every request) each
/// set one value, not two.
package struct ModuleScope: Sendable {
    let services: Services?
    let call: ModuleCall?

    /// Outside any module's code.
    static let host = ModuleScope(services: nil, call: nil)

    @TaskLocal static var current = ModuleScope.host
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
            try await ModuleScope.$current.withValue(ModuleScope(services: self, call: call), operation: operation)
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
            try await ModuleScope.$current.withValue(.host, operation: operation)
        }
    }
}
