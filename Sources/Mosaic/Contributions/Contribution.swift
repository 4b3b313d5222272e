package import Foundation

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
    /// The tab (the identifier of a contribution to ``ExtensionPoint/tabs``) this contribution is a page of, if
    /// any; validated against the tabs modules declare.
    public var tab: String?
    /// Anything else a host and its modules agree on.
    public var attributes: [String: String]

    /// Metadata with `title` and the rest as given.
    public init(
        title: String, icon: String? = nil, group: String? = nil, keywords: [String] = [], tab: String? = nil,
        attributes: [String: String] = [:]
    ) {
        self.title = title
        self.icon = icon
        self.group = group
        self.keywords = keywords
        self.tab = tab
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
    /// What the host filters, groups and labels the contribution by.
    public let metadata: ContributionMetadata
    /// The entitlement the host must grant for the contribution to show, if any.
    public let entitlement: Entitlement?
    private let make: @Sendable () async throws -> Content
    /// The contributing module's context, which runs host-invoked module code as a call of the module.
    private let context: ActivationContext?
    /// The content once built, when it is kept (a route's or middleware's handler): the contribution is bound once
    /// per activation, so kept content never outlives the activation it was built in.
    private let kept: KeptContent<Content>?

    /// A contribution whose content `make` builds; with `keepsContent`, content built once is kept for the rest of
    /// the activation instead of built per read.
    package init(
        id: String, module: ModuleID, priority: Int, metadata: ContributionMetadata, entitlement: Entitlement?,
        context: ActivationContext? = nil, keepsContent: Bool = false,
        make: @escaping @Sendable () async throws -> Content
    ) {
        self.id = id
        self.module = module
        self.priority = priority
        self.metadata = metadata
        self.entitlement = entitlement
        self.context = context
        self.kept = keepsContent ? KeptContent() : nil
        self.make = make
    }

    /// Runs code the content handed the host (a route's or a middleware's handler) as a call of the contributing
    /// module: with its services (so `@Injected` resolves), refused once the module is on its way out, and awaited
    /// before its `deactivate()` runs.
    package func call<R>(_ operation: () async throws -> R) async throws -> R {
        guard let context else { return try await operation() }
        return try await context.call(operation)
    }

    /// Builds the content, resolving the services its factory takes from the contributing module's services.
    public func content() async throws -> Content {
        if let value = kept?.value { return value }
        let value = try await make()
        kept?.keep(value)
        return value
    }

    /// The content built earlier in this activation, when the contribution keeps its content (a route's or
    /// middleware's handler), read without awaiting: what a host reads on every request, where ``content()``, an
    /// async call, costs more than the read. `nil` until the first ``content()`` has built it.
    package var keptContent: Content? { kept?.value }

    /// Whether `self` comes before `other` under `order`.
    public func precedes(_ other: Self, in order: ContributionOrder) -> Bool {
        order.precedes(
            (metadata.title, priority, module, id), (other.metadata.title, other.priority, other.module, other.id))
    }
}

extension ContributionOrder {
    /// The keys a contribution is ordered by.
    package typealias Keys = (title: String, priority: Int, module: ModuleID, id: String)

    /// Whether a contribution with keys `lhs` comes before one with `rhs`: the rule's keys, then the module's
    /// identifier, then the contribution's.
    package func precedes(_ lhs: Keys, _ rhs: Keys) -> Bool {
        if case .title = self, lhs.title != rhs.title { return lhs.title < rhs.title }
        if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
        if lhs.module != rhs.module { return lhs.module.rawValue < rhs.module.rawValue }
        return lhs.id < rhs.id
    }
}

/// A contribution as a module declared it, before the kernel binds it to the module's services.
package struct ContributionDeclaration: Sendable {
    package let point: AnyExtensionPoint
    package let id: String
    package let priority: Int
    package let metadata: ContributionMetadata
    package let entitlement: Entitlement?
    /// The services its factory takes, in order.
    package let dependencies: [AnyServiceKey]
    /// The typed ``Contribution`` of `module`, whose factory resolves from `context`'s services.
    package let bind: @Sendable (_ module: ModuleID, _ context: ActivationContext) -> any Sendable
    /// The typed ``Contribution`` of `module` while it waits on standby: its content starts the module with
    /// `start`, which returns the live contribution (bound by ``bind``), and builds that. A contribution that can
    /// be shown without its module (a tab) is built from the host alone and starts nothing.
    package let bindStandby:
        @Sendable (
            _ module: ModuleID, _ host: HostEnvironment, _ start: @escaping @Sendable () async throws -> any Sendable
        ) -> any Sendable
    /// Whether building the content of the module's standby contribution starts the module.
    package let startsModule: Bool
    /// How the content crosses to a host from a module in a process of its own (`nil` when it cannot: its type is
    /// not `Codable`).
    package let crossing: ContentCrossing?

    /// The keys `module`'s contribution is ordered by.
    package func keys(module: ModuleID) -> ContributionOrder.Keys {
        (metadata.title, priority, module, id)
    }

    /// The declaration as the host of a module in another process keeps it: it takes no services here, and its
    /// content comes from that process through `remote` (called with the point's and the contribution's ids and,
    /// for a call, what it carries); `nil` when the content cannot cross.
    package func remote(
        _ remote: @escaping @Sendable (_ point: String, _ id: String, _ call: Data?) async throws -> Data
    ) -> ContributionDeclaration? {
        guard let crossing else { return nil }
        let point = point.id
        let id = id
        return ContributionDeclaration(
            point: self.point, id: id, priority: priority, metadata: metadata, entitlement: entitlement,
            dependencies: [],
            bind: { [self] module, _ in crossing.bindRemote(self, module) { try await remote(point, id, $0) } },
            bindStandby: bindStandby, startsModule: startsModule, crossing: crossing)
    }
}

extension ContributionDeclaration {
    /// The contribution this declares, of `module`, whose content `content` builds.
    fileprivate func contribution<Content: Sendable>(
        of module: ModuleID, content: @escaping @Sendable () async throws -> Content
    ) -> Contribution<Content> {
        Contribution(
            id: id, module: module, priority: priority, metadata: metadata, entitlement: entitlement, make: content)
    }
}

/// How a contribution's content crosses between processes: built where its module runs and encoded as JSON, or,
/// for ``CallableContent``, answering each call there.
package struct ContentCrossing: Sendable {
    /// In the module's process: the content of `bound` (a contribution ``ContributionDeclaration/bind`` made)
    /// encoded, or, for a call (`call` is not `nil`), the content's answer to it, encoded.
    package let serve: @Sendable (_ bound: any Sendable, _ call: Data?) async throws -> Data
    /// In the host: the contribution of `module` whose content comes from its process through `remote`.
    package let bindRemote:
        @Sendable (
            _ declaration: ContributionDeclaration, _ module: ModuleID,
            _ remote: @escaping @Sendable (_ call: Data?) async throws -> Data
        ) -> any Sendable

    /// How content of type `Content` crosses, or `nil` when it cannot (neither `Codable` nor ``CallableContent``).
    package static func of<Content: Sendable>(_ type: Content.Type) -> ContentCrossing? {
        if let callable = Content.self as? any CallableContent.Type {
            return calls(of: callable, content: Content.self)
        }
        guard let codable = Content.self as? any (Codable & Sendable).Type else { return nil }
        return values(as: codable, content: Content.self)
    }

    private static func values<Coded: Codable & Sendable, Content: Sendable>(
        as coded: Coded.Type, content: Content.Type
    ) -> ContentCrossing {
        ContentCrossing(
            serve: { bound, _ in
                guard let contribution = bound as? Contribution<Content>,
                    let value = try await contribution.content() as? Coded
                else { throw CrossingError("the contribution is not of \(Content.self)") }
                return try JSONEncoder().encode(value)
            },
            bindRemote: { declaration, module, remote in
                declaration.contribution(of: module) { () async throws -> Content in
                    let decoded = try JSONDecoder().decode(Coded.self, from: try await remote(nil))
                    guard let content = decoded as? Content else {
                        throw CrossingError("\(Coded.self) did not read back as \(Content.self)")
                    }
                    return content
                }
            })
    }

    private static func calls<Callable: CallableContent, Content: Sendable>(
        of callable: Callable.Type, content: Content.Type
    ) -> ContentCrossing {
        ContentCrossing(
            serve: { bound, call in
                guard let contribution = bound as? Contribution<Content>,
                    let content = try await contribution.content() as? Callable
                else { throw CrossingError("the contribution is not of \(Content.self)") }
                guard let call else { throw CrossingError("\(Content.self) answers calls, and none came") }
                let answer = try await content.answer(try JSONDecoder().decode(Callable.Call.self, from: call))
                return try JSONEncoder().encode(answer)
            },
            bindRemote: { declaration, module, remote in
                declaration.contribution(of: module) { () async throws -> Content in
                    let standIn = Callable.standIn(declaration.metadata) { call in
                        let answer = try await remote(try JSONEncoder().encode(call))
                        return try JSONDecoder().decode(Callable.Answer.self, from: answer)
                    }
                    guard let content = standIn as? Content else {
                        throw CrossingError("the host cannot stand in for \(Content.self) '\(declaration.id)'")
                    }
                    return content
                }
            })
    }
}

/// Content that did not cross between processes as it should have.
struct CrossingError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
