/// What a kernel learns about services as they are used, for its spans and metrics: each build, each failed
/// resolve, and (only when ``countsResolves``) each resolve.
package protocol ServiceObserver: Sendable {
    /// Whether ``resolved(_:by:)`` is called on every resolve.
    var countsResolves: Bool { get }
    /// Runs `body`, the build of `key`'s service provided by `provider`.
    func build<T>(_ key: AnyServiceKey, provider: ModuleID, _ body: () throws(ServiceError) -> T) throws(ServiceError)
        -> T
    /// `module` failed to resolve a service with `error`.
    func resolveFailed(_ error: ServiceError, by module: ModuleID)
    /// `module` resolved a service.
    func resolved(by module: ModuleID)
    /// A caller began to wait, without a thread, for another caller's first build of `key`'s service.
    func awaitingBuild(_ key: AnyServiceKey, provider: ModuleID)
}

extension ServiceObserver {
    /// Learns nothing of waits: an observer opts in by implementing it.
    package func awaitingBuild(_ key: AnyServiceKey, provider: ModuleID) {}
}
