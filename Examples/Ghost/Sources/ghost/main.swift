import GhostApp
import Logging
import MosaicKernel

// Ghost boots its modules and prints what became of each; a later version serves them on the web.
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

let kernel = Kernel(
    catalog: ModuleCatalog(groups: AppManifest.groups),
    host: AppManifest.host,
    entitlements: .granted(AppManifest.defaultEntitlements))
let report = try await kernel.boot()
print(report.table)
await kernel.shutdown()
