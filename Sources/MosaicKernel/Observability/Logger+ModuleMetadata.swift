public import Logging
internal import Mosaic
internal import Tracing

extension Logger.MetadataProvider {
    /// Adds `mosaic.module` (the module whose code is running) to every log line, including those module code
    /// writes; a host passes it to `LoggingSystem.bootstrap(_:metadataProvider:)`.
    ///
    /// The module is the one the task-local `ServiceContext` names (`ServiceContext.mosaicModule`), or else the
    /// one whose call the task is in: a call sets a `ServiceContext` only when its caller has one, so in a host
    /// that does not trace, module code has no `ServiceContext` and its lines are named from the call alone.
    public static let mosaicModule = Logger.MetadataProvider {
        guard let id = ServiceContext.current?.mosaicModule ?? Services.current?.module else { return [:] }
        return ["mosaic.module": "\(id.rawValue)"]
    }
}
