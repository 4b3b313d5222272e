public import Mosaic

/// Where a module is in its life, as the host and tests see it.
///
/// ```
/// discovered ─► validated ─► authorized ─► active ─► deactivated
///      │            │   │         ▲   │                  │
///      │            │   └► standby┘   │                  │
///      ▼            ▼        │        ▼                  ▼
///   failed       blocked ◄───┴─ blocked / failed       authorized or standby (again), or blocked
/// ```
/// `failed` means the module itself cannot run (invalid, incompatible, in a cycle, threw or hung while activating)
/// and stays so until it is uninstalled. `blocked` means something outside it keeps it down (an entitlement, a
/// dependency) and lifts when that changes. `standby` is an on-demand module that may run and waits for its first
/// use (`module.activation = .onDemand`).
public enum ModuleState: Sendable, Hashable, CustomStringConvertible {
    /// Listed or found; nothing checked yet.
    case discovered
    /// Passed validation.
    case validated
    /// Has every entitlement it needs; about to activate.
    case authorized
    /// May run, and starts on its first use (an on-demand module); what starts it is in the boot report.
    case standby
    /// Running.
    case active
    /// Stopped cleanly.
    case deactivated
    /// Cannot run, for `reason`.
    case failed(reason: String)
    /// Held back by `blockers`, for `reason`.
    case blocked(by: [Blocker], reason: String)

    /// A short name of the state, without its reason: `active`, `failed`, `blocked`…
    public var name: String {
        switch self {
        case .discovered: "discovered"
        case .validated: "validated"
        case .authorized: "authorized"
        case .standby: "standby"
        case .active: "active"
        case .deactivated: "deactivated"
        case .failed: "failed"
        case .blocked: "blocked"
        }
    }

    /// Why the module is failed or blocked; `nil` in every other state.
    public var reason: String? {
        switch self {
        case .failed(let reason), .blocked(_, let reason): reason
        default: nil
        }
    }

    /// Whether the module is running.
    public var isActive: Bool { self == .active }

    /// The state's name, followed by the reason when the module is failed or blocked: `blocked: …`.
    public var description: String {
        reason.map { "\(name): \($0)" } ?? name
    }
}

/// What holds a blocked module back.
public enum Blocker: Sendable, Hashable, CustomStringConvertible {
    /// A required module that is missing, failed or blocked.
    case module(ModuleID)
    /// An entitlement that is not granted.
    case entitlement(Entitlement)

    /// `module com.ghost.location` or `entitlement 'weather'`.
    public var description: String {
        switch self {
        case .module(let id): "module \(id)"
        case .entitlement(let entitlement): "entitlement '\(entitlement)'"
        }
    }
}

/// One change of a module's state.
public struct StateChange: Sendable, Hashable, CustomStringConvertible {
    /// The module.
    public let id: ModuleID
    /// The state it left.
    public let from: ModuleState
    /// The state it entered.
    public let to: ModuleState

    /// `com.ghost.weather: active → blocked: …`, for logs.
    public var description: String { "\(id): \(from.name) → \(to)" }
}
