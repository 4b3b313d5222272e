public import Instrumentation

/// The key under which the task-local `ServiceContext` carries the module whose code is running.
///
/// The kernel sets it whenever it calls into a module (activation, a phase, a link handler, a content build, a
/// route's or middleware's handler, a task) from a task that has a `ServiceContext` (a span's, when the kernel
/// traces, or the host's), so spans and log lines that module code makes can name the module. From a task that has
/// none, it sets none: module code then sees no `ServiceContext`, and `Logger.MetadataProvider.mosaicModule` names
/// the module from the call itself.
package enum ModuleContextKey: ServiceContextKey {
    /// The module's identifier.
    package typealias Value = ModuleID
    /// The key's name, as a tracer or log handler shows it.
    package static var nameOverride: String? { "mosaic.module.id" }
}

extension ServiceContext {
    /// The module whose code runs in this task, when the kernel called into one from a task with a
    /// `ServiceContext` (from a task without one, the kernel sets none).
    public var mosaicModule: ModuleID? {
        get { self[ModuleContextKey.self] }
        set { self[ModuleContextKey.self] = newValue }
    }
}
