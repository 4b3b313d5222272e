internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// The host's side of an isolated module's shared state and events, for one process of it: writes the child asks
/// for are made here, as the module (through its context, so with the same declared-writes rule and ledger as in
/// process); events it publishes go to the host's hub as the module; and the host sends the child each declared
/// key's new values and the events of the types the module subscribes to.
final class SharingHost: Sendable {
    private let module: ModuleID
    private let child: ChildProcess
    private let context: ActivationContext
    private let keys: [String: StateKeyCrossing]
    private let published: [String: DeclaredEventType]
    private let subscribed: [DeclaredEventType]
    private let configurationKeys: [AnyConfigurationKey]
    private let logger: Logger
    /// Held while a key's value is read and sent, so that the child gets each key's values in the order they were
    /// read: a value sent after another is never older.
    private let sending = Locked(())
    /// The keys the module writes, by identifier.
    private let written: [String]
    /// What the module's transactional durable handlers recorded for each key and the host has not committed yet:
    /// the deliveries of a batch commit together, so each runs on what the ones before it recorded. A key's entry
    /// goes once the key's value changes in the host (the batch committed) or a commit finds it stale.
    private let recorded = Locked([String: Data]())

    init(
        context: ActivationContext, interactions: ModuleInteractions, configurationKeys: [AnyConfigurationKey],
        child: ChildProcess, logger: Logger
    ) {
        self.configurationKeys = configurationKeys
        module = context.id
        self.child = child
        self.context = context
        self.logger = logger
        keys = Dictionary(interactions.stateKeys.map { ($0.id, $0.crossing) }) { first, _ in first }
        written = interactions.written
        let crossing = interactions.eventTypes
        let publishing = crossing.filter { interactions.published.contains($0.name) }
        published = Dictionary(publishing.map { ($0.name, $0) }) { first, _ in first }
        subscribed = crossing.filter { interactions.subscribed.contains($0.name) }
    }

    /// The values of the keys the module declares, encoded: what its mirror starts with.
    func initialState() -> [String: Data] {
        guard let store = context.state.store else { return [:] }
        return keys.compactMapValues { $0.encoded(store) }
    }

    /// Takes the child's requests and notices from now on: before it activates, since activation may write.
    func listen() {
        child.onInbound { [self] frame in take(frame) }
    }

    /// Sends the child each declared key's changes and the events it subscribes to, for as long as the module is
    /// active: the work is the module's, which the kernel cancels when it deactivates or fails. The subscriptions
    /// are made before this returns, so that nothing published once the module is active is missed.
    func follow() {
        if let store = context.state.store {
            for (key, crossing) in keys {
                let work = crossing.follow(store) { [self] in
                    forget(key)
                    send([key])
                }
                context.task { await work() }
            }
        }
        for key in configurationKeys {
            let work = context.configuration.follow(key) { [child] value in
                child.send(.notice(.configuration(name: key.name, value: value)))
            }
            if let work { context.task { await work() } }
        }
        guard let bus = context.events.bus else { return }
        for type in subscribed {
            let work = type.forward(bus, module) { [child, logger, name = type.name] event, sender in
                guard let event else {
                    logger.error("an event could not be encoded for the isolated module", metadata: ["type": "\(name)"])
                    return
                }
                child.send(.notice(.event(type: name, sender: sender.rawValue, event: event)))
            }
            context.task { await work() }
        }
    }

    private func take(_ frame: BoundaryFrame) {
        switch frame {
        case .request(let number, .write(let writes)):
            Task { [self] in
                let answer = await write(writes)
                child.send(.answer(id: number, answer))
            }
        case .request(let number, .handle(let type, let name, let transactional)):
            Task { [self] in
                let answer = await answer { try await handle(type, as: name, transactional: transactional) }
                child.send(.answer(id: number, answer))
            }
        case .request(let number, .publish(let type, let events)):
            Task { [self] in
                let answer = await answer {
                    guard let durable = published[type]?.durable, let bus = context.events.bus else {
                        throw EventError(.invalid, "\(module) does not declare that it publishes \(type)")
                    }
                    try await durable.publish(events, bus, module)
                }
                child.send(.answer(id: number, answer))
            }
        case .notice(.published(let type, let event)):
            publish(type, event)
        default:
            logger.warning("an isolated module's process sent a frame the host does not take")
        }
    }

    /// Publishes an event the module published in its process, as the module; the child checked that its type is
    /// declared, so a refusal here is the module's state (inactive), which is logged.
    private func publish(_ type: String, _ event: Data) {
        do {
            guard let declared = published[type], let bus = context.events.bus else {
                throw EventError(.invalid, "\(module) does not declare that it publishes \(type)")
            }
            try declared.publish(event, bus, module)
        } catch {
            logger.error("an event the isolated module published was refused", metadata: ["error": "\(error)"])
        }
    }

    /// Registers the module's durable handler `name` of `type` in the host's outbox, as the module: each delivery is
    /// a call to the child, which runs the handler it kept under that name; the delivery completes only when the
    /// child answers (a transactional handler's records commit with it), and a child that ends first answers nothing,
    /// so the delivery is handed back and runs again.
    private func handle(_ type: String, as name: String, transactional: Bool) async throws {
        guard let durable = subscribed.first(where: { $0.name == type })?.durable, let bus = context.events.bus else {
            throw EventError(.invalid, "\(module) does not declare that it subscribes to \(type)")
        }
        let recording: (@Sendable (Data?, inout StateTransaction) throws -> Void)? =
            transactional ? { @Sendable [self] answer, transaction in try record(answer, in: &transaction) } : nil
        try await durable.handle(bus, module, name, recording) { [self] envelope in
            try await child.call(.deliver(handler: name, envelope: envelope, base: transactional ? base() : [:]))
        }
    }

    /// Records in a delivery's `transaction` what the module's transactional handler recorded in its process.
    private func record(_ answer: Data?, in transaction: inout StateTransaction) throws {
        let answered = try JSONDecoder().decode(CrossingTransaction.self, from: answer ?? Data())
        for write in answered.writes {
            guard let crossing = keys[write.key] else {
                throw ModuleStateAccess.undeclaredWrite(of: write.key, by: module)
            }
            try crossing.stage(write.expected, write.value, { [self] in forget(write.key) }, &transaction)
            recorded.withLock { $0[write.key] = write.value }
        }
        for event in answered.events {
            guard let durable = published[event.type]?.durable else {
                throw EventError(.invalid, "\(module) does not declare that it publishes \(event.type)")
            }
            try durable.stage(event.event, &transaction)
        }
    }

    /// Forgets what was recorded for `key` and not committed: the key changed in the host, or a commit found it
    /// changed since.
    private func forget(_ key: String) {
        recorded.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// The values a transactional handler's changes run on in the module's process: for each key the module
    /// writes, what an earlier delivery recorded and the host has not committed yet, else the host's value.
    private func base() -> [String: Data] {
        guard let store = context.state.store else { return [:] }
        let pending = recorded.withLock { $0 }
        var base: [String: Data] = [:]
        for key in written { base[key] = pending[key] ?? keys[key]?.encoded(store) }
        return base
    }

    /// What the child is answered when `work` returns or throws.
    private func answer(_ work: () async throws -> Void) async -> BoundaryAnswer {
        do {
            try await work()
            return .done
        } catch let error as EventError {
            return .eventError(code: error.code.rawValue, message: error.message)
        } catch let error as StateError {
            return .stateError(code: error.code.rawValue, message: error.message)
        } catch {
            return .eventError(code: EventError.Code.invalid.rawValue, message: "\(error)")
        }
    }

    /// Makes the child's write here; then sends the keys' new values, ahead of the answer, so that the module
    /// reads what it wrote once the write returns.
    private func write(_ writes: [MirroredWrite]) async -> BoundaryAnswer {
        guard let store = context.state.store else {
            return .stateError(code: StateError.Code.notRunning.rawValue, message: "\(module) has no state store.")
        }
        do {
            var staged: [(MirroredWrite, StateKeyCrossing)] = []
            for write in writes {
                guard let crossing = keys[write.key] else {
                    throw ModuleStateAccess.undeclaredWrite(of: write.key, by: module)
                }
                staged.append((write, crossing))
            }
            if let (write, crossing) = staged.first, staged.count == 1 {
                try await crossing.write(write.expected, write.value, store, module)
            } else {
                var transaction = StateTransaction()
                for (write, crossing) in staged { try crossing.stage(write.expected, write.value, {}, &transaction) }
                try await store.commit(transaction, as: module)
            }
            send(writes.map(\.key))
            return .done
        } catch is StaleMirror {
            return .stale(writes.reduce(into: [:]) { now, write in now[write.key] = keys[write.key]?.encoded(store) })
        } catch let error as StateError {
            return .stateError(code: error.code.rawValue, message: error.message)
        } catch {
            return .stateError(code: StateError.Code.invalid.rawValue, message: "\(error)")
        }
    }

    /// Sends the child the values `keys` hold now.
    private func send(_ ids: [String]) {
        guard let store = context.state.store else { return }
        sending.withLock { _ in
            for id in ids {
                guard let value = keys[id]?.encoded(store) else {
                    logger.error("a state value does not encode for the module's process", metadata: ["key": "\(id)"])
                    continue
                }
                child.send(.notice(.state(key: id, value: value)))
            }
        }
    }
}
