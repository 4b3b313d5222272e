public import Mosaic

/// Why a module was activated: the kernel booted, the host granted an entitlement or installed the module, or a
/// module it depends on came up.
public enum ActivationCause: Sendable, Hashable, CustomStringConvertible {
    /// The kernel booted.
    case boot
    /// The host granted this entitlement, which the module needs.
    case grant(Entitlement)
    /// The host installed the module.
    case install
    /// A module it requires came up (after a grant, an install or an uninstall elsewhere).
    case dependency(ModuleID)
    /// Its first use started it (an on-demand module), or a module it is required by: what the use was.
    case demand(String)

    /// A short name without the subject: `boot`, `grant`, `install` or `dependency`.
    public var name: String {
        switch self {
        case .boot: "boot"
        case .grant: "grant"
        case .install: "install"
        case .dependency: "dependency"
        case .demand: "demand"
        }
    }

    /// The cause with its subject, such as `grant weather` or `dependency com.ghost.location`.
    public var description: String {
        switch self {
        case .boot: "boot"
        case .grant(let entitlement): "grant \(entitlement)"
        case .install: "install"
        case .dependency(let module): "dependency \(module)"
        case .demand(let use): "demand: \(use)"
        }
    }
}
