/// A place in the host that modules fill: the dashboard, the tab bar, a settings page, a route table.
///
/// The host declares its points; modules contribute content of the point's `Content` type without knowing who else
/// does, and the host reads every contribution in one mediated order, each with the module that made it.
///
/// ```swift
/// extension ExtensionPoint where Content == Panel {
///     static let reports = ExtensionPoint(id: "com.app.reports", cardinality: .any, order: .title)
/// }
/// ```
public struct ExtensionPoint<Content: Sendable>: Sendable, Hashable {
    /// The point's identifier, unique in a host.
    public let id: String
    /// How many contributions the point takes.
    public let cardinality: Cardinality
    /// How its contributions are ordered.
    public let order: ContributionOrder

    /// A point named `id` that takes `cardinality` contributions, shown in `order`.
    public init(id: String, cardinality: Cardinality = .any, order: ContributionOrder = .priority) {
        self.id = id
        self.cardinality = cardinality
        self.order = order
    }

    /// The point with its content type erased, for the host's list of points.
    public var erased: AnyExtensionPoint { AnyExtensionPoint(self) }
}

/// How many contributions an extension point takes; a violation is a validation diagnostic.
public enum Cardinality: Sendable, Hashable, CustomStringConvertible {
    /// Any number, including none.
    case any
    /// None or one (a main view that modules may claim).
    case atMostOne
    /// Exactly one.
    case exactlyOne
    /// One or more.
    case atLeastOne

    /// Whether `count` contributions satisfy this cardinality.
    public func admits(_ count: Int) -> Bool {
        switch self {
        case .any: true
        case .atMostOne: count <= 1
        case .exactlyOne: count == 1
        case .atLeastOne: count >= 1
        }
    }

    /// The value as text, for messages and logs.
    public var description: String {
        switch self {
        case .any: "any number"
        case .atMostOne: "at most one"
        case .exactlyOne: "exactly one"
        case .atLeastOne: "at least one"
        }
    }
}

/// The order in which the host reads a point's contributions. Every rule ends in the module's identifier and
/// then the contribution's, so the order never depends on the order in which modules registered or activated.
public enum ContributionOrder: Sendable, Hashable {
    /// Highest priority first.
    case priority
    /// By title (then priority), for alphabetical lists such as settings pages.
    case title
}

/// An extension point with its content type erased: what a host lists, and what validation checks against.
public struct AnyExtensionPoint: Sendable, Hashable, CustomStringConvertible {
    /// The point's identifier.
    public let id: String
    /// How many contributions the point takes.
    public let cardinality: Cardinality
    /// How the point orders its contributions.
    public let order: ContributionOrder
    /// The identity of the content type, which every contribution to the point must produce.
    public let contentType: ObjectIdentifier
    /// The content type's name, for messages.
    public let contentTypeName: String
    /// Turns the point's contributions, already ordered, into the typed list hosts read.
    package let makeList: @Sendable ([any Sendable]) -> any AnyObject & Sendable

    /// `point` with its content type erased.
    public init<Content>(_ point: ExtensionPoint<Content>) {
        id = point.id
        cardinality = point.cardinality
        order = point.order
        contentType = ObjectIdentifier(Content.self)
        contentTypeName = qualifiedTypeName(Content.self)
        makeList = { items in ContributionList(items.compactMap { $0 as? Contribution<Content> }) }
    }

    /// Whether `lhs` and `rhs` are equal.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id == rhs.id && lhs.contentType == rhs.contentType && lhs.cardinality == rhs.cardinality
            && lhs.order == rhs.order
    }

    /// Feeds the value's identity to `hasher`.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// The value as text, for messages and logs.
    public var description: String { "\(id) (\(contentTypeName))" }
}

/// A point's contributions, in a class so that reading them back needs only a class cast, not an array cast.
package final class ContributionList<Content: Sendable>: Sendable {
    package let items: [Contribution<Content>]
    init(_ items: [Contribution<Content>]) { self.items = items }
}
