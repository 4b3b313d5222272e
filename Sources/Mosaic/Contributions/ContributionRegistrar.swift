extension ModuleRegistrar {
    /// Contributes to `point`: `content`'s parameters are services, resolved from this module's services when the
    /// host builds the content (they are declared uses, so validation checks them before anything runs). A
    /// parameter of type ``ActivationContext`` gets the module's context instead, for content that reads shared
    /// state: `{ (context: ActivationContext, forecasts: any ForecastService) in … }`.
    ///
    /// ```swift
    /// module.contribute(to: .dashboard, id: "weather.widget", priority: 100, title: "Weather") {
    ///     (forecasts: any ForecastService) in Panel(.heading("Today"), .text(forecasts.headline(for: "Oslo")))
    /// }
    /// ```
    public mutating func contribute<Content: Sendable, each Dependency: Sendable>(
        to point: ExtensionPoint<Content>, id: String, priority: Int = 0, title: String, icon: String? = nil,
        group: String? = nil, keywords: [String] = [], attributes: [String: String] = [:],
        requires entitlement: Entitlement? = nil,
        content: @escaping @Sendable (repeat each Dependency) async throws -> Content
    ) {
        let metadata = ContributionMetadata(
            title: title, icon: icon, group: group, keywords: keywords, attributes: attributes)
        var dependencies: [ServiceKey] = []
        for type in repeat (each Dependency).self {
            guard ObjectIdentifier(type) != ObjectIdentifier(ActivationContext.self) else { continue }
            dependencies.append(ServiceKey(type))
            services.use(type)
        }
        contributions.append(
            ContributionDeclaration(
                point: point.erased, id: id, priority: priority, metadata: metadata, entitlement: entitlement,
                dependencies: dependencies,
                bind: { module, context in
                    Contribution<Content>(
                        id: id, module: module, priority: priority, metadata: metadata, entitlement: entitlement,
                        context: context
                    ) {
                        try await context.call {
                            try await content(repeat try Self.argument((each Dependency).self, context))
                        }
                    }
                }))
    }

    /// The module's context when `type` is ``ActivationContext``, otherwise the service `type`.
    static func argument<T: Sendable>(_ type: T.Type, _ context: ActivationContext) throws -> T {
        if let context = context as? T { return context }
        return try context.services.resolve(type)
    }
}
