/// Content for panels (dashboard cards, widgets, settings pages, inspectors, the main view): a few blocks of
/// UI-agnostic content. A host turns them into its own views: HTML in the web host, SwiftUI views on Apple platforms.
public struct Panel: Sendable, Hashable, Codable {
    /// The panel's blocks, in order.
    public var blocks: [Block]

    /// A panel of `blocks`, in order.
    public init(_ blocks: Block...) { self.blocks = blocks }
    /// A panel of `blocks`, in order.
    public init(blocks: [Block]) { self.blocks = blocks }
}

extension Panel: CustomStringConvertible {
    /// The panel as plain text, one block per line: for logs, terminals and tests.
    public var description: String { blocks.map(\.description).joined(separator: "\n") }
}

/// One piece of a ``Panel``. Text is plain text: hosts escape it; modules never write markup.
public indirect enum Block: Sendable, Hashable, Codable {
    /// A heading.
    case heading(String)
    /// A paragraph of plain text.
    case text(String)
    /// Label–value pairs, such as "Wind: 12 km/h".
    case facts([Fact])
    /// A bulleted list.
    case list([String])
    /// A link to a deeplink or a path of the host.
    case link(title: String, target: String)
    /// An image by URL or path, with its text alternative.
    case image(source: String, alternative: String)
    /// Blocks that belong together.
    case group([Block])
}

extension Block: CustomStringConvertible {
    /// The value as text, for messages and logs.
    public var description: String {
        switch self {
        case .heading(let text): "# \(text)"
        case .text(let text): text
        case .facts(let facts): facts.map { "\($0.label): \($0.value)" }.joined(separator: ", ")
        case .list(let items): items.map { "- \($0)" }.joined(separator: "\n")
        case .link(let title, let target): "\(title) <\(target)>"
        case .image(let source, let alternative): "[\(alternative)](\(source))"
        case .group(let blocks): blocks.map(\.description).joined(separator: "\n")
        }
    }
}

/// A label and its value.
public struct Fact: Sendable, Hashable, Codable {
    /// The label, such as `Wind`.
    public var label: String
    /// The value, such as `12 km/h`.
    public var value: String

    /// The fact `label: value`.
    public init(_ label: String, _ value: String) {
        self.label = label
        self.value = value
    }
}

/// Content for navigation points (tabs, sidebar, toolbar, menu): where the item leads. Its title and icon are the
/// contribution's metadata.
public struct NavigationItem: Sendable, Hashable, Codable {
    /// A deeplink or a path of the host.
    public var target: String
    /// A short badge, such as an unread count.
    public var badge: String?

    /// An item leading to `target` (a link or a path of the host), with an optional badge.
    public init(target: String, badge: String? = nil) {
        self.target = target
        self.badge = badge
    }
}

extension ExtensionPoint where Content == NavigationItem {
    /// Ghost's tab bar: one tab per feature module.
    public static var tabs: Self { ExtensionPoint(id: "mosaic.tabs") }
    /// Forsetti's sidebar.
    public static var sidebar: Self { ExtensionPoint(id: "mosaic.sidebar") }
    /// Forsetti's toolbar.
    public static var toolbar: Self { ExtensionPoint(id: "mosaic.toolbar") }
    /// Forsetti's menu, ordered by title.
    public static var menu: Self { ExtensionPoint(id: "mosaic.menu", order: .title) }
}

extension ExtensionPoint where Content == Panel {
    /// Forsetti's dashboard.
    public static var dashboard: Self { ExtensionPoint(id: "mosaic.dashboard") }
    /// Ghost's dashboard widgets.
    public static var dashboardWidgets: Self { ExtensionPoint(id: "mosaic.dashboard-widgets") }
    /// Settings pages, ordered by title.
    public static var settings: Self { ExtensionPoint(id: "mosaic.settings", order: .title) }
    /// Forsetti's inspector.
    public static var inspector: Self { ExtensionPoint(id: "mosaic.inspector") }
    /// Ghost's main view: one module at most may claim it.
    public static var mainView: Self { ExtensionPoint(id: "mosaic.main-view", cardinality: .atMostOne) }
}

extension ModuleRegistrar {
    /// Declares the tab `id`: a contribution to ``ExtensionPoint/tabs`` that leads to `scheme://id` in the host's
    /// scheme, and that pages (`contribute(to:…, tab: id)`) may name. The title defaults to `id`.
    public mutating func tab(
        _ id: String, priority: Int = 0, title: String? = nil, icon: String? = nil,
        requires entitlement: Entitlement? = nil
    ) {
        // A tab shows while its module waits on standby: its target is known without the module.
        contribute(
            to: .tabs, id: id, priority: priority, title: title, icon: icon, requires: entitlement,
            standby: { host in NavigationItem(target: Deeplink(scheme: host.linkScheme, tab: id).url) },
            content: { (context: ActivationContext) in NavigationItem(target: context.url(forTab: id)) })
    }
}

extension AnyExtensionPoint {
    /// The points every kernel declares: Forsetti's and Ghost's.
    public static let builtIn: [AnyExtensionPoint] = [
        ExtensionPoint.tabs.erased, ExtensionPoint.sidebar.erased, ExtensionPoint.toolbar.erased,
        ExtensionPoint.menu.erased, ExtensionPoint.dashboard.erased, ExtensionPoint.dashboardWidgets.erased,
        ExtensionPoint.settings.erased, ExtensionPoint.inspector.erased, ExtensionPoint.mainView.erased,
    ]
}
