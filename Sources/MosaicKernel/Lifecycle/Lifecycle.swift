/// A module's lifecycle as a type-state machine: illegal transitions cannot be written.
///
/// Each state is a token type whose initializer is private to this file, so the only way to obtain, say, an
/// ``Active`` token is to call ``Authorized/activate()`` on an ``Authorized`` one. The kernel can therefore only
/// move a module along the edges drawn in ``ModuleState``'s documentation; any other move does not compile.
enum Lifecycle: Sendable {
    case discovered(Discovered)
    case validated(Validated)
    case authorized(Authorized)
    case standby(Standby)
    case active(Active)
    case deactivated(Deactivated)
    case failed(Failed)
    case blocked(Blocked)

    /// Every module starts here.
    static let start = Lifecycle.discovered(Discovered())

    /// The public view of the state.
    var state: ModuleState {
        switch self {
        case .discovered: .discovered
        case .validated: .validated
        case .authorized: .authorized
        case .standby: .standby
        case .active: .active
        case .deactivated: .deactivated
        case .failed(let failed): .failed(reason: failed.reason)
        case .blocked(let blocked): .blocked(by: blocked.blockers, reason: blocked.reason)
        }
    }
}

struct Discovered: Sendable {
    fileprivate init() {}
    func validate() -> Validated { Validated() }
    func fail(_ reason: String) -> Failed { Failed(reason: reason) }
}

struct Validated: Sendable {
    fileprivate init() {}
    func authorize() -> Authorized { Authorized() }
    /// May run, and waits for its first use (an on-demand module).
    func standBy() -> Standby { Standby() }
    func block(by blockers: [Blocker], reason: String) -> Blocked { Blocked(blockers: blockers, reason: reason) }
}

struct Authorized: Sendable {
    fileprivate init() {}
    func activate() -> Active { Active() }
    func fail(_ reason: String) -> Failed { Failed(reason: reason) }
    func block(by blockers: [Blocker], reason: String) -> Blocked { Blocked(blockers: blockers, reason: reason) }
}

/// Validated and authorized, not started: an on-demand module waiting for its first use.
struct Standby: Sendable {
    fileprivate init() {}
    /// Its first use came: it starts.
    func authorize() -> Authorized { Authorized() }
    func block(by blockers: [Blocker], reason: String) -> Blocked { Blocked(blockers: blockers, reason: reason) }
}

struct Active: Sendable {
    fileprivate init() {}
    func deactivate() -> Deactivated { Deactivated() }
}

struct Deactivated: Sendable {
    fileprivate init() {}
    /// Stopped by a fault of its own while it ran (its process ended).
    func fail(_ reason: String) -> Failed { Failed(reason: reason) }
    /// Reactivation, once whatever stopped the module is resolved.
    func authorize() -> Authorized { Authorized() }
    /// May run again, and waits for its next use (an on-demand module).
    func standBy() -> Standby { Standby() }
    func block(by blockers: [Blocker], reason: String) -> Blocked { Blocked(blockers: blockers, reason: reason) }
}

struct Failed: Sendable {
    let reason: String
    fileprivate init(reason: String) { self.reason = reason }
    /// Restarted (`Kernel.restart(_:)`): it may run again.
    func restart() -> Deactivated { Deactivated() }
}

struct Blocked: Sendable {
    let blockers: [Blocker]
    let reason: String
    fileprivate init(blockers: [Blocker], reason: String) {
        self.blockers = blockers
        self.reason = reason
    }
    /// The blockers are gone: the module is valid again and waits for authorization.
    func unblock() -> Validated { Validated() }
    /// Still blocked, for another reason.
    func block(by blockers: [Blocker], reason: String) -> Blocked { Blocked(blockers: blockers, reason: reason) }
}
