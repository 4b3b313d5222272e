/// What a host can filter, group and label a contribution by, before building its content.
public struct ContributionMetadata: Sendable, Hashable {
    /// A short, human title.
    public var title: String
    /// An icon name in the host's icon set.
    public var icon: String?
    /// A group the host may gather contributions under.
    public var group: String?
    /// Words a host's search may match.
    public var keywords: [String]
    /// Anything else a host and its modules agree on.
    public var attributes: [String: String]

    public init(
        title: String, icon: String? = nil, group: String? = nil, keywords: [String] = [],
        attributes: [String: String] = [:]
    ) {
        self.title = title
        self.icon = icon
        self.group = group
        self.keywords = keywords
        self.attributes = attributes
    }
}

/// One module's contribution to an extension point, as the host reads it: data to order, filter and label by, and
/// a factory for the content, which runs only when the host builds it.
public struct Contribution<Content: Sendable>: Sendable, Identifiable {
    /// The contribution's identifier, unique in its point.
    public let id: String
    /// The module that contributed it.
    public let module: ModuleID
    /// Higher comes first under ``ContributionOrder/priority``.
    public let priority: Int
    public let metadata: ContributionMetadata
    /// The entitlement the host must grant for the contribution to show, if any.
    public let entitlement: Entitlement?
    private let make: @Sendable () async throws -> Content

    package init(
        id: String, module: ModuleID, priority: Int, metadata: ContributionMetadata, entitlement: Entitlement?,
        make: @escaping @Sendable () async throws -> Content
    ) {
        self.id = id
        self.module = module
        self.priority = priority
        self.metadata = metadata
        self.entitlement = entitlement
        self.make = make
    }

    /// Builds the content, resolving the services its factory takes from the contributing module's services.
    public func content() async throws -> Content {
        try await make()
    }

    /// Whether `self` comes before `other` under `order`.
    public func precedes(_ other: Self, in order: ContributionOrder) -> Bool {
        order.precedes(
            (metadata.title, priority, module, id), (other.metadata.title, other.priority, other.module, other.id))
    }
}

extension ContributionOrder {
    /// The keys a contribution is ordered by.
    public typealias Keys = (title: String, priority: Int, module: ModuleID, id: String)

    /// Whether a contribution with keys `lhs` comes before one with `rhs`: the rule's keys, then the module's
    /// identifier, then the contribution's.
    public func precedes(_ lhs: Keys, _ rhs: Keys) -> Bool {
        if case .title = self, lhs.title != rhs.title { return lhs.title < rhs.title }
        if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
        if lhs.module != rhs.module { return lhs.module.rawValue < rhs.module.rawValue }
        return lhs.id < rhs.id
    }
}

/// A contribution as a module declared it, before the kernel binds it to the module's services.
public struct ContributionDeclaration: Sendable {
    public let point: AnyExtensionPoint
    public let id: String
    public let priority: Int
    public let metadata: ContributionMetadata
    public let entitlement: Entitlement?
    /// The services its factory takes, in order.
    public let dependencies: [ServiceKey]
    /// The typed ``Contribution`` of `module`, whose factory resolves from `context`'s services.
    package let bind: @Sendable (_ module: ModuleID, _ context: ActivationContext) -> any Sendable

    /// The keys `module`'s contribution is ordered by.
    public func keys(module: ModuleID) -> ContributionOrder.Keys {
        (metadata.title, priority, module, id)
    }
}
