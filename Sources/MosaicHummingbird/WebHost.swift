public import Mosaic
public import MosaicKernel
internal import MosaicWeb

/// A web shell over a kernel: its regions are the standard extension points, filled with the active modules'
/// contributions in mediated order; plus pages that show the system (modules, graph, settings).
///
/// Every module-provided string is escaped; the only state-changing requests are POSTs carrying the page's CSRF
/// token.
public struct WebHost: Sendable {
    /// The kernel being served; the host boots and shuts it down.
    public let kernel: Kernel
    /// The modules, for the graph and the entitlements the settings page offers.
    public let catalog: ModuleCatalog
    /// The scheme of the app's deeplinks, such as `ghost`.
    public let scheme: String
    /// The app's name, in page titles.
    public let title: String
    /// The token every form carries; random per host, so another site cannot forge a form post.
    let csrfToken: String
    /// The entitlements the modules name, found once: the catalog does not change while the host serves it.
    let declaredEntitlements: Set<Entitlement>

    public init(kernel: Kernel, catalog: ModuleCatalog, scheme: String, title: String) {
        self.kernel = kernel
        self.catalog = catalog
        self.scheme = scheme
        self.title = title
        declaredEntitlements = catalog.declaredEntitlements
        var generator = SystemRandomNumberGenerator()
        csrfToken = (0..<32).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.joined()
    }

    /// The extension points the web host adds to the standard ones; pass them to the kernel.
    public static var extensionPoints: [AnyExtensionPoint] { WebPoints.all }

    /// Every entitlement a module asks for, and every one granted now, sorted.
    func knownEntitlements(granted: Set<Entitlement>) -> [Entitlement] {
        declaredEntitlements.union(granted).sorted()
    }
}
