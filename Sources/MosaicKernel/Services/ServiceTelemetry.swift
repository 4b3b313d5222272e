internal import CoreMetrics
internal import Mosaic
internal import Synchronization
internal import Tracing

/// The kernel's ``ServiceObserver``: a span and a count per service build, a count per failed resolve, and (when
/// the host opted in) a count per resolve.
struct ServiceTelemetry: ServiceObserver {
    let telemetry: Telemetry
    /// The build counters of each provider, so that a transient service (built on every resolve) pays one lookup
    /// rather than a handle lookup by label and dimensions.
    private let builds = BuildCounters()

    init(telemetry: Telemetry) {
        self.telemetry = telemetry
    }

    /// The observer for `telemetry`, or `nil` when nothing records (then a build or a failed resolve reports to
    /// no one, and costs nothing).
    static func observer(for telemetry: Telemetry) -> ServiceTelemetry? {
        telemetry.isRecording ? ServiceTelemetry(telemetry: telemetry) : nil
    }

    var countsResolves: Bool { telemetry.countsResolves }

    func build<T>(_ key: AnyServiceKey, provider: ModuleID, _ body: () throws(ServiceError) -> T) throws(ServiceError)
        -> T
    {
        // Without a tracer there is no span to name: a transient service is built on every resolve, and naming its
        // type (reflection) cost microseconds each time.
        guard telemetry.traces else {
            do {
                let value = try body()
                builds.counters(of: provider, in: telemetry).built.increment()
                return value
            } catch {
                builds.counters(of: provider, in: telemetry).failed.increment()
                throw error
            }
        }
        let span = telemetry.startSpan(
            SpanName.serviceBuild,
            attributes: [SpanKey.service: .string(key.name), SpanKey.module: .string(provider.rawValue)])
        defer { span.end() }
        do {
            let value = try body()
            span.attributes[SpanKey.outcome] = "built"
            builds.counters(of: provider, in: telemetry).built.increment()
            return value
        } catch {
            span.attributes[SpanKey.outcome] = "failed"
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.code.description))
            builds.counters(of: provider, in: telemetry).failed.increment()
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

/// `mosaic_service_builds_total` by provider, built and failed, made on a provider's first build.
private final class BuildCounters: Sendable {
    private let counters = Locked<[ModuleID: (built: Counter, failed: Counter)]>([:])

    func counters(of provider: ModuleID, in telemetry: Telemetry) -> (built: Counter, failed: Counter) {
        if let made = counters.withLock({ $0[provider] }) { return made }
        let made = (
            built: telemetry.counter(MetricName.serviceBuilds, [("module", provider.rawValue), ("outcome", "built")]),
            failed: telemetry.counter(MetricName.serviceBuilds, [("module", provider.rawValue), ("outcome", "failed")])
        )
        counters.withLock { $0[provider] = made }
        return made
    }
}
