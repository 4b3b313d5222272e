internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// An isolated module's process's side of shared state and events: its kernel's state hub is the mirror of the
/// keys the module declares, which the host keeps current; writes go to the host as requests; the events the host
/// forwards go to the module's subscriptions in its kernel's hub, and those it publishes go to the host.
final class ChildSharing: Sendable {
    /// The keys the module declares, by identifier.
    let keys: [String: StateKeyCrossing]
    /// The keys the module declares it writes.
    let declaredWrites: Set<String>
    /// The event types the module declares it publishes and that can cross, by name.
    let published: Set<String>
    /// The event types the module declares it subscribes to and that can cross, by name.
    let subscribed: [String: DeclaredEventType]
    let logger: Logger
    private let send: @Sendable (BoundaryFrame) -> Void
    private let state = Locked(State())

    private struct State {
        var mirror: (any StateMirroring)?
        var relay: (any EventRelaying)?
        /// Where the module's configuration values are kept, which the host's reloads change.
        var configuration: (hub: ConfigurationHub, module: ModuleID)?
        var pending: [Int: CheckedContinuation<BoundaryAnswer, any Error>] = [:]
        var nextRequest = 0
        var hostLeft = false
        /// The module's durable handlers, by name: each runs a delivery the host sends and answers with what a
        /// transactional one recorded.
        var handlers: [String: @Sendable (_ envelope: Data, _ base: [String: Data]) async throws -> Data?] = [:]
    }

    /// The sharing of the module `interactions` declares, whose frames to the host go to `send`.
    init(interactions: ModuleInteractions, logger: Logger, send: @escaping @Sendable (BoundaryFrame) -> Void) {
        keys = Dictionary(interactions.stateKeys.map { ($0.id, $0.crossing) }) { first, _ in first }
        declaredWrites = Set(interactions.written)
        let crossing = interactions.eventTypes
        published = Set(crossing.map(\.name).filter(interactions.published.contains))
        let subscribing = crossing.filter { interactions.subscribed.contains($0.name) }
        subscribed = Dictionary(subscribing.map { ($0.name, $0) }) { first, _ in first }
        self.logger = logger
        self.send = send
    }

    /// Keeps the mirror in `mirror`, hands forwarded events to `relay` and the host's reloads of `module`'s
    /// configuration to `configuration`; the mirror starts with `values`.
    func attach(
        mirror: any StateMirroring, relay: any EventRelaying, configuration: ConfigurationHub, module: ModuleID,
        values: [String: Data]
    ) {
        state.withLock { state in
            state.mirror = mirror
            state.relay = relay
            state.configuration = (configuration, module)
        }
        for (key, value) in values { _ = keys[key]?.mirror(value, mirror) }
    }

    /// Takes an answer or a notice from the host, on the thread that reads them, in order.
    func take(_ frame: BoundaryFrame) {
        switch frame {
        case .answer(let number, let answer):
            state.withLock { $0.pending.removeValue(forKey: number) }?.resume(returning: answer)
        case .notice(.state(let key, let value)):
            guard let mirror = state.withLock({ $0.mirror }), let crossing = keys[key] else { return }
            if !crossing.mirror(value, mirror) { logger.error("the host sent a value of \(key) that does not decode") }
        case .notice(.configuration(let name, let value)):
            guard let (hub, module) = state.withLock({ $0.configuration }) else { return }
            hub.update(module, name, to: value.value)
        case .notice(.event(let type, let sender, let event)):
            guard let relay = state.withLock({ $0.relay }), let declared = subscribed[type] else { return }
            if !declared.relay(event, relay, ModuleID(sender)) {
                logger.error("the host sent an event \(type) that does not decode")
            }
        default:
            logger.warning("the host sent a frame the module's process does not take")
        }
    }

    /// Sends `request` and waits for the host's answer; fails when the host has left.
    func request(_ request: BoundaryRequest) async throws -> BoundaryAnswer {
        try await withCheckedThrowingContinuation { continuation in
            let number = state.withLock { state -> Int? in
                guard !state.hostLeft else { return nil }
                state.nextRequest += 1
                state.pending[state.nextRequest] = continuation
                return state.nextRequest
            }
            guard let number else {
                continuation.resume(throwing: StateError(.unavailable, "The host has left; nothing was written."))
                return
            }
            send(.request(id: number, request))
        }
    }

    /// Keeps `run` as the module's durable handler `name`, for the deliveries the host sends once it registered it.
    func keep(
        handler name: String,
        _ run: @escaping @Sendable (_ envelope: Data, _ base: [String: Data]) async throws -> Data?
    ) {
        state.withLock { $0.handlers[name] = run }
    }

    /// Runs the module's durable handler `name` on the delivery `envelope` the host sent, a transactional one's
    /// changes on `base`.
    func deliver(to name: String, _ envelope: Data, base: [String: Data]) async throws -> Data? {
        guard let run = state.withLock({ $0.handlers[name] }) else {
            throw BoundaryError("the module has no durable handler '\(name)' in its process")
        }
        return try await run(envelope, base)
    }

    /// Tells the host the module published `event`, of the type named `type`.
    func publish(_ type: String, _ event: Data) {
        send(.notice(.published(type: type, event: event)))
    }

    /// The host closed the pipe: every request still waiting fails, and no more are sent.
    func hostLeft() {
        let pending = state.withLock { state in
            state.hostLeft = true
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for request in pending {
            request.resume(throwing: StateError(.unavailable, "The host left before it answered; retry."))
        }
    }
}
