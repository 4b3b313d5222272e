extension ModuleRegistrar {
    /// Contributes to `point`: `content`'s parameters are services, resolved from this module's services when the
    /// host builds the content (they are declared uses, so validation checks them before anything runs).
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
            dependencies.append(ServiceKey(type))
            services.use(type)
        }
        contributions.append(
            ContributionDeclaration(
                point: point.erased, id: id, priority: priority, metadata: metadata, entitlement: entitlement,
                dependencies: dependencies,
                bind: { module, services in
                    Contribution<Content>(
                        id: id, module: module, priority: priority, metadata: metadata, entitlement: entitlement
                    ) {
                        try await services.inject {
                            try await content(repeat try services.resolve((each Dependency).self))
                        }
                    }
                }))
    }
}
