internal import Foundation
internal import Mosaic

/// One message between a host and the child process that runs an isolated module: a call from the host, or the
/// child's reply to one (by the call's number). On the pipe each is a frame: 4 bytes of length (big endian), then
/// the message as JSON. The same messages whatever the module: the child's kernel runs its code, the host's
/// mediates everything else.
enum BoundaryFrame: Codable, Sendable {
    case call(id: Int, BoundaryCall)
    case reply(id: Int, BoundaryReply)
}

/// What the host asks the child, and waits for.
enum BoundaryCall: Codable, Sendable {
    /// Start the module: the child boots a kernel of its own with the module alone.
    case activate(host: HostPlan)
    /// Stop the module (its `deactivate()` runs); the child exits when the host then closes its pipe.
    case deactivate
    /// Build the content of the module's contribution `id` to the point `point`, encoded as JSON; for content
    /// that answers calls, answer `call` (encoded) with it.
    case content(point: String, id: String, call: Data?)
    /// Open `url`, a link one of the module's handlers takes.
    case open(url: String)
    /// Answer at once: the heartbeat by which the host knows the child is not stopped or stuck.
    case ping
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
