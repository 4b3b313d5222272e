public import Mosaic

extension Kernel {
    /// Every service, as the host sees them: the host may resolve anything any active module provides.
    public var services: Services { serviceRuntime.hostView }

    /// What module `id` may resolve, or `nil` when the kernel has no such module.
    public func services(for id: ModuleID) -> Services? {
        graph.position[id].map { serviceRuntime.views[$0] }
    }

    /// Drops the instances of `.cached` services; each is built again on its next use.
    public func resetCached() {
        serviceRuntime.reset(cachedOnly: true)
    }

    /// Drops the instances of every singleton and cached service, for tests that need a fresh start.
    public func resetAll() {
        serviceRuntime.reset(cachedOnly: false)
    }
}
