internal import Mosaic
internal import Tracing

extension DeeplinkRouter {
    /// Opens `link` as ``dispatch(_:navigationOnly:)`` does, inside a `mosaic.deeplink` span, and counts it by route
    /// template and outcome.
    ///
    /// The span and the count carry the feature and action only when a module handles them (never a value only the
    /// link made up), and never the link's parameters.
    func open(_ link: Deeplink, navigationOnly: Bool = false) async -> DeeplinkResult {
        // With neither a tracer nor a metrics backend, there is no span to fill and nothing to count: attributes set
        // on a no-op span still built a dictionary each, a tenth of a dispatch.
        guard telemetry.traces || telemetry.measures else {
            return await dispatch(link, navigationOnly: navigationOnly)
        }
        let span = telemetry.startSpan(SpanName.deeplink)
        let result = await ServiceContext.$current.withValue(span.context) {
            await dispatch(link, navigationOnly: navigationOnly)
        }
        let route: (template: String, module: ModuleID)?
        if let feature = link.feature {
            let key = RouteKey(feature: feature, action: link.action)
            route = template(of: key)
            if let route {
                span.attributes.set(SpanKey.module, value: .string(route.module.rawValue))
                span.attributes.set(SpanKey.feature, value: .string(feature))
                if !route.template.hasSuffix("/*"), let action = link.action {
                    span.attributes.set(SpanKey.action, value: .string(action))
                }
            }
        } else {
            route = nil
        }
        let outcome: String
        switch result {
        case .handled: outcome = "handled"
        case .notHandled(let error):
            outcome = error.code.rawValue
            span.setStatus(SpanStatus(code: .error, message: error.code.rawValue))
        }
        span.attributes.set(SpanKey.outcome, value: .string(outcome))
        span.end()
        let template = link.feature == nil ? "(tab)" : route?.template ?? "(unmatched)"
        telemetry.count(
            MetricName.deeplinks,
            [("route", template), ("module", route?.module.rawValue ?? ""), ("outcome", outcome)])
        return result
    }
}
