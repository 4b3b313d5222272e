internal import Mosaic
internal import Tracing

/// The kernel's ``ServiceObserver``: a span and a count per service build, a count per failed resolve, and (when
/// the host opted in) a count per resolve.
struct ServiceTelemetry: ServiceObserver {
    let telemetry: Telemetry

    var countsResolves: Bool { telemetry.countsResolves }

    func build<T>(_ key: AnyServiceKey, provider: ModuleID, _ body: () throws(ServiceError) -> T) throws(ServiceError)
        -> T
    {
        let span = telemetry.startSpan(
            SpanName.serviceBuild,
            attributes: [SpanKey.service: .string(key.name), SpanKey.module: .string(provider.rawValue)])
        defer { span.end() }
        do {
            let value = try body()
            span.attributes[SpanKey.outcome] = "built"
            telemetry.count(MetricName.serviceBuilds, [("module", provider.rawValue), ("outcome", "built")])
            return value
        } catch {
            span.attributes[SpanKey.outcome] = "failed"
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.code.description))
            telemetry.count(MetricName.serviceBuilds, [("module", provider.rawValue), ("outcome", "failed")])
            throw error
        }
    }

    func resolveFailed(_ error: ServiceError, by module: ModuleID) {
        telemetry.count(MetricName.resolveFailures, [("module", module.rawValue), ("code", error.code.description)])
    }

    func resolved(by module: ModuleID) {
        telemetry.count(MetricName.resolves, [("module", module.rawValue)])
    }
}
