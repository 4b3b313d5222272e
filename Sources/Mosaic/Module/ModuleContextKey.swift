public import Instrumentation

/// The key under which the task-local `ServiceContext` carries the module whose code is running.
///
/// The kernel sets it whenever it calls into a module (activation, a phase, a link handler, a content build, a
/// task), so spans and log lines that module code makes can name the module.
package enum ModuleContextKey: ServiceContextKey {
    /// The module's identifier.
    package typealias Value = ModuleID
    /// The key's name, as a tracer or log handler shows it.
    package static var nameOverride: String? { "mosaic.module.id" }
}

extension ServiceContext {
    /// The module whose code runs in this task, when the kernel called into one.
    public var mosaicModule: ModuleID? {
        get { self[ModuleContextKey.self] }
        set { self[ModuleContextKey.self] = newValue }
    }
}
