internal import Synchronization

extension ModuleRegistrar {
    /// Contributes to `point`: `content`'s parameters are injected, as in every closure a module registers (link
    /// handlers, participants, listeners): a parameter of type ``ActivationContext`` gets the module's context, any
    /// other a service, resolved from this module's services when the host builds the content (they are declared
    /// uses, so validation checks them before anything runs). The title defaults to `id`.
    ///
    /// ```swift
    /// module.contribute(to: .dashboard, id: "weather.widget", priority: 100, title: "Weather") {
    ///     (forecasts: any ForecastService) in Panel(.heading("Today"), .text(forecasts.headline(for: "Oslo")))
    /// }
    /// ```
    /// A page of a tab names the tab it belongs to with `tab:`; a tab no module declares is a boot diagnostic.
    public mutating func contribute<Content: Sendable, each Dependency: Sendable>(
        to point: ExtensionPoint<Content>, id: String, priority: Int = 0, title: String? = nil, icon: String? = nil,
        group: String? = nil, keywords: [String] = [], tab: String? = nil, attributes: [String: String] = [:],
        requires entitlement: Entitlement? = nil,
        content: @escaping @Sendable (repeat each Dependency) async throws -> Content
    ) {
        contribute(
            to: point, id: id, priority: priority, title: title, icon: icon, group: group, keywords: keywords,
            tab: tab, attributes: attributes, requires: entitlement, standby: nil, content: content)
    }

    /// Contributes to `point`; while the module waits on standby (``Activation/onDemand``), `standby` builds the
    /// content from the host alone, when given, instead of starting the module. With `keepsContent`, content built
    /// once is kept until the module deactivates (a route's or middleware's handler), instead of built per read.
    package mutating func contribute<Content: Sendable, each Dependency: Sendable>(
        to point: ExtensionPoint<Content>, id: String, priority: Int = 0, title: String? = nil, icon: String? = nil,
        group: String? = nil, keywords: [String] = [], tab: String? = nil, attributes: [String: String] = [:],
        requires entitlement: Entitlement? = nil, standby: (@Sendable (HostEnvironment) -> Content)?,
        keepsContent: Bool = false, content: @escaping @Sendable (repeat each Dependency) async throws -> Content
    ) {
        let metadata = ContributionMetadata(
            title: title ?? id, icon: icon, group: group, keywords: keywords, tab: tab, attributes: attributes)
        let dependencies = declareInjected(repeat (each Dependency).self)
        contributions.append(
            ContributionDeclaration(
                point: point.erased, id: id, priority: priority, metadata: metadata, entitlement: entitlement,
                dependencies: dependencies,
                bind: { module, context in
                    Contribution<Content>(
                        id: id, module: module, priority: priority, metadata: metadata, entitlement: entitlement,
                        context: context, keepsContent: keepsContent
                    ) {
                        try await context.call {
                            try await Self.awaitArguments(context, repeat (each Dependency).self)
                            return try await content(repeat try Self.argument((each Dependency).self, context))
                        }
                    }
                },
                bindStandby: { module, host, start in
                    Contribution<Content>(
                        id: id, module: module, priority: priority, metadata: metadata, entitlement: entitlement
                    ) {
                        if let standby { return standby(host) }
                        guard let live = try await start() as? Contribution<Content> else {
                            throw ModuleUnavailableError(
                                .notStarted, module: module,
                                message: "\(module) started without its contribution \(id); open the page again.")
                        }
                        return try await live.content()
                    }
                },
                startsModule: standby == nil, crossing: ContentCrossing.of(Content.self)))
    }

    /// Declares the services among a registered closure's parameter types (all but ``ActivationContext``) as
    /// uses, and returns their keys.
    mutating func declareInjected<each Parameter>(_ types: repeat (each Parameter).Type) -> [AnyServiceKey] {
        var keys: [AnyServiceKey] = []
        for type in repeat each types {
            guard ObjectIdentifier(type) != ObjectIdentifier(ActivationContext.self) else { continue }
            keys.append(AnyServiceKey(type))
            services.use(AnyServiceKey(type))
        }
        return keys
    }

    /// Waits without holding a thread until the services among `types` (a closure's parameter types) are built, so
    /// that ``argument(_:_:)`` reads them: a first build under way for another caller is awaited, not waited for on a
    /// thread of the cooperative pool.
    static func awaitArguments<each Parameter>(
        _ context: ActivationContext, _ types: repeat (each Parameter).Type
    ) async throws {
        for type in repeat each types {
            guard ObjectIdentifier(type) != ObjectIdentifier(ActivationContext.self) else { continue }
            try await context.services.awaitBuild(of: type)
        }
    }

    /// The module's context when `type` is ``ActivationContext``, otherwise the service `type`.
    static func argument<T: Sendable>(_ type: T.Type, _ context: ActivationContext) throws -> T {
        if let context = context as? T { return context }
        return try context.services.resolve(type)
    }
}

/// Content built once and kept for the rest of an activation; a build that throws keeps nothing, so the next read
/// builds again.
final class KeptContent<Content: Sendable>: Sendable {
    private let stored = Locked<Content?>(nil)

    var value: Content? { stored.withLock { $0 } }

    /// Keeps `value` unless a concurrent first build kept its own already (either serves).
    func keep(_ value: Content) {
        stored.withLock { if $0 == nil { $0 = value } }
    }
}
