internal import Foundation
internal import Mosaic

/// One message between a host and the child process that runs an isolated module: a call from the host, or the
/// child's reply to one (by the call's number); a request from the child, or the host's answer to it; or a notice
/// either way, which nothing answers. On the pipe each is a frame: 4 bytes of length (big endian), then the message
/// as JSON. The same messages whatever the module: the child's kernel runs its code, the host's mediates everything
/// else, shared state and events included.
enum BoundaryFrame: Codable, Sendable {
    case call(id: Int, BoundaryCall)
    case reply(id: Int, BoundaryReply)
    case request(id: Int, BoundaryRequest)
    case answer(id: Int, BoundaryAnswer)
    case notice(BoundaryNotice)
}

/// What the child asks the host, and waits for.
enum BoundaryRequest: Codable, Sendable {
    /// Write shared state as the module: each key, if the host still holds the value the child's mirror had, gets
    /// the new one; one key alone is a write, several a transaction.
    case write([MirroredWrite])
    /// Register the module's durable handler `name` of the durable event type named `type` in the host's outbox,
    /// whose deliveries the host then sends with ``BoundaryCall/deliver(handler:envelope:)``; `transactional` when
    /// the handler takes a transaction.
    case handle(type: String, name: String, transactional: Bool)
    /// Put `events`, of the durable event type named `type`, into the outbox as the module, in one commit.
    case publish(type: String, events: [Data])
}

/// One key of a write from the child: what its mirror held when the change ran, and what the change made of it.
struct MirroredWrite: Codable, Sendable {
    let key: String
    let expected: Data
    let value: Data
}

/// What a transactional handler recorded in a module's process, as it crosses back to the host with its answer:
/// each written key's value before and after (as for a write from the process), and each durable event published.
struct CrossingTransaction: Codable, Sendable {
    let writes: [MirroredWrite]
    let events: [CrossingEvent]
}

/// A durable event that crosses encoded, with the qualified name of its type.
struct CrossingEvent: Codable, Sendable {
    let type: String
    let event: Data

    init(_ event: any DurableEvent) throws {
        type = qualifiedTypeName(Swift.type(of: event))
        self.event = try JSONEncoder().encode(event)
    }
}

/// The host's answer to a request.
enum BoundaryAnswer: Codable, Sendable {
    case done
    /// The host no longer held what the child's mirror had: these are the keys' values now, to run the change on.
    case stale([String: Data])
    /// Refused as in process: a ``StateError``'s code and message.
    case stateError(code: String, message: String)
    /// Refused as in process: an ``EventError``'s code and message.
    case eventError(code: String, message: String)
}

/// What one side tells the other without waiting for an answer. In order, on one pipe: a child sees the values and
/// events its host sent in the order the host sent them, and the new values of its writes before their answers.
enum BoundaryNotice: Codable, Sendable {
    /// Host to child: shared state `key` holds `value` now.
    case state(key: String, value: Data)
    /// Host to child: `sender` published `event`, of the type named `type`, which the module subscribes to.
    case event(type: String, sender: String, event: Data)
    /// Host to child: the host reloaded the module's configuration key `name`, which holds `value` now.
    case configuration(name: String, value: CrossingConfigurationValue)
    /// Child to host: the module published `event`, of the type named `type`.
    case published(type: String, event: Data)
}

/// What the host asks the child, and waits for.
enum BoundaryCall: Codable, Sendable {
    /// Start the module: the child boots a kernel of its own with the module alone, its mirror of shared state
    /// holding `state`, the encoded values of the keys the module declares, and its configuration `configuration`,
    /// the values the host read for it.
    case activate(host: HostPlan, state: [String: Data], configuration: [String: CrossingConfigurationValue])
    /// Stop the module (its `deactivate()` runs); the child exits when the host then closes its pipe.
    case deactivate
    /// Build the content of the module's contribution `id` to the point `point`, encoded as JSON; for content
    /// that answers calls, answer `call` (encoded) with it.
    case content(point: String, id: String, call: Data?)
    /// Open `url`, a link one of the module's handlers takes.
    case open(url: String)
    /// Run the module's durable handler `name` on `envelope` (a ``CrossingEnvelope``); a transactional handler's
    /// changes run on `base` (the values of the keys it writes, as the host will commit them) and it answers with
    /// what it recorded, a ``CrossingTransaction``. The host completes the delivery only on the answer.
    case deliver(handler: String, envelope: Data, base: [String: Data])
    /// Run the module's participants in the lifecycle phase `phase`, or its listeners of the host event `event`.
    case dispatch(phase: String?, event: CrossingHostEvent?)
    /// Answer at once: the heartbeat by which the host knows the child is not stopped or stuck.
    case ping
}

/// A host event as it crosses to a module's process.
struct CrossingHostEvent: Codable, Sendable {
    let kind: String
    let url: String?
    let attributes: [String: String]

    init(_ event: HostEvent) {
        kind = event.kind.name
        url = event.url
        attributes = event.attributes
    }

    var event: HostEvent { HostEvent(HostEvent.Kind(kind), url: url, attributes: attributes) }
}

/// The answer to a call.
enum BoundaryReply: Codable, Sendable {
    /// Done, with what the call asks for, encoded (or nothing).
    case done(Data?)
    /// Not done: why, as the child says it.
    case failed(String)
}

/// The host's environment, as the child's kernel is given it.
struct HostPlan: Codable, Sendable {
    let version: SemanticVersion
    let platform: Platform
    let platformVersion: SemanticVersion
    let features: Set<String>
    /// The link scheme first, then the others.
    let schemes: [String]

    init(_ host: HostEnvironment) {
        version = host.version
        platform = host.platform
        platformVersion = host.platformVersion
        features = host.features
        schemes = host.schemes.isEmpty ? [] : [host.linkScheme] + host.schemes.subtracting([host.linkScheme]).sorted()
    }

    var environment: HostEnvironment {
        HostEnvironment(
            version: version, platform: platform, platformVersion: platformVersion, features: features,
            schemes: schemes)
    }
}

/// What went wrong across the boundary: the child ended, broke the protocol, or failed the call.
struct BoundaryError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What an isolated module's process answered to a call it could not do: the module's own error (a content build
/// or a link handler that threw, an activation that failed), as the process describes it.
struct ModuleProcessError: Error, Sendable, CustomStringConvertible {
    let description: String
}
