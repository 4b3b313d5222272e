public import Logging
internal import Mosaic
internal import Tracing

extension Logger.MetadataProvider {
    /// Adds `mosaic.module` (the module whose code is running, from the task-local `ServiceContext`) to every log
    /// line, including those module code writes; a host passes it to `LoggingSystem.bootstrap(_:metadataProvider:)`.
    public static let mosaicModule = Logger.MetadataProvider {
        guard let id = ServiceContext.current?.mosaicModule else { return [:] }
        return ["mosaic.module": "\(id.rawValue)"]
    }
}
