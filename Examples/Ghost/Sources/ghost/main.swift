import GhostApp
import Logging
import Mosaic
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
try await kernel.run(.launch)
print("\nTabs: " + kernel.contributions(for: .tabs).map(\.metadata.title).joined(separator: " · "))
print("Dashboard:")
for widget in kernel.contributions(for: .dashboardWidgets) {
    let text = try await widget.content().blocks.map(\.description).joined(separator: " · ")
    print("  \(widget.metadata.title) (\(widget.module)): \(text)")
}
await kernel.shutdown()
