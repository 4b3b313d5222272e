public import Mosaic

/// One problem the kernel found, with what to do about it.
///
/// Validation collects every problem of the whole graph in one pass; each one is a diagnostic with a stable
/// ``code`` that tests and tools can match, the modules it concerns, and a message that ends with the fix.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How much the problem matters.
    public enum Severity: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Worth knowing; nothing is held back.
        case note
        /// A module is held back or degraded, but nothing is broken (a missing entitlement, a missing optional
        /// dependency).
        case warning
        /// A module cannot run until the problem is fixed.
        case error

        /// Orders severities from ``note`` to ``error``, so that `diagnostics.map(\.severity).max()` is the worst.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `note`, `warning` or `error`, as printed at the start of a diagnostic.
        public var description: String {
            switch self {
            case .note: "note"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// Where in a file a problem is.
    public struct Location: Sendable, Hashable, CustomStringConvertible {
        /// The file's path.
        public var file: String
        /// The 1-based line, when known.
        public var line: Int?
        /// The 1-based column, when known.
        public var column: Int?
        /// The path of keys to the bad value, such as `dependencies[1].versions`, when known.
        public var keyPath: String?

        /// Points at a file, and within it at a line and column or a key path when they are known.
        public init(file: String, line: Int? = nil, column: Int? = nil, keyPath: String? = nil) {
            self.file = file
            self.line = line
            self.column = column
            self.keyPath = keyPath
        }

        /// `path:line:column (at key.path)`, leaving out the parts that are not known.
        public var description: String {
            var text = file
            if let line { text += ":\(line)" }
            if let column { text += ":\(column)" }
            if let keyPath { text += " (at \(keyPath))" }
            return text
        }
    }

    /// The problem's stable identifier.
    public var code: Code
    /// How much it matters.
    public var severity: Severity
    /// The modules concerned; the first is the one the problem belongs to. For a cycle, the cycle's path in order.
    public var modules: [ModuleID]
    /// What is wrong.
    public var message: String
    /// How to fix it.
    public var fix: String
    /// The file the problem was found in, for problems found while reading manifest files.
    public var location: Location?

    /// Makes a diagnostic; a message or fix longer than 4,096 UTF-8 bytes is cut short, with its length stated.
    ///
    /// Hosts and tools make their own diagnostics with this, for example to report problems they find beside the
    /// kernel's in one list. End `fix` with what the reader should do.
    public init(
        _ code: Code,
        _ severity: Severity,
        modules: [ModuleID],
        message: String,
        fix: String,
        location: Location? = nil
    ) {
        self.code = code
        self.severity = severity
        self.modules = modules
        self.message = Self.bounded(message)
        self.fix = Self.bounded(fix)
        self.location = location
    }

    /// The longest message or fix kept, in UTF-8 bytes: a net under the quoting that keeps messages short, so that no
    /// input makes a diagnostic grow without bound.
    static let maximumTextLength = 4_096

    private static func bounded(_ text: String) -> String {
        guard text.utf8.count > maximumTextLength else { return text }
        return String(text.prefix(maximumTextLength / 2)) + "… (\(text.utf8.count) bytes in all)"
    }

    /// `error[dependency.cycle] com.a: … Fix: …`, with the file location first when there is one.
    public var description: String {
        var text = location.map { "\($0): " } ?? ""
        text += "\(severity)[\(code)]"
        if let subject = modules.first { text += " \(subject)" }
        return text + ": \(message) Fix: \(fix)"
    }
}

extension Diagnostic {
    /// A diagnostic's stable identifier, such as `dependency.cycle`.
    ///
    /// Codes are strings so that adding one is never a breaking change; match them with the static members.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The code as written, area then problem, such as `dependency.cycle`.
        public let rawValue: String
        /// Wraps any string; codes Mosaic does not define are allowed, for a host's or tool's own diagnostics.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Lets a code be written as a string literal, as the static members below are.
        public init(stringLiteral value: String) { self.init(rawValue: value) }
        /// The code as written: ``rawValue``.
        public var description: String { rawValue }

        // Discovery
        /// A manifest directory could not be read.
        public static let directoryUnreadable: Code = "discovery.directory-unreadable"
        /// A manifest file could not be read, is not valid JSON, or does not have the manifest's shape.
        public static let manifestMalformed: Code = "discovery.manifest-malformed"
        /// A manifest file has a key Mosaic does not know (often a typo).
        public static let manifestUnknownKey: Code = "discovery.manifest-unknown-key"
        /// A manifest file names an entry point the host did not register.
        public static let unknownEntryPoint: Code = "discovery.unknown-entry-point"
        /// A manifest file disagrees with the manifest of the module its entry point creates.
        public static let manifestMismatch: Code = "discovery.manifest-mismatch"

        // Identity
        /// A module identifier breaks the identifier rules.
        public static let invalidIdentifier: Code = "identity.invalid-id"
        /// Two different modules have the same identifier.
        public static let duplicateIdentifier: Code = "identity.duplicate-id"
        /// A module's version is not a semantic version.
        public static let invalidVersion: Code = "identity.invalid-version"
        /// A version range or entitlement name in a manifest is malformed.
        public static let invalidDeclaration: Code = "identity.invalid-declaration"

        // Compatibility
        /// The host's version is outside the module's accepted range.
        public static let incompatibleHostVersion: Code = "compatibility.host-version"
        /// The module does not support the host's platform or platform version.
        public static let incompatiblePlatform: Code = "compatibility.platform"
        /// The host lacks a feature the module requires.
        public static let missingHostFeature: Code = "compatibility.host-feature"

        // Dependencies
        /// A required dependency is not installed.
        public static let missingDependency: Code = "dependency.missing"
        /// An optional dependency is not installed.
        public static let missingOptionalDependency: Code = "dependency.optional-missing"
        /// A dependency is installed at a version outside the accepted range.
        public static let dependencyVersionMismatch: Code = "dependency.version-mismatch"
        /// Modules depend on each other in a cycle.
        public static let dependencyCycle: Code = "dependency.cycle"
        /// A module cannot be uninstalled while others require it.
        public static let hasDependents: Code = "dependency.has-dependents"

        // Services
        /// Two registrations of one service at the same rank.
        public static let duplicateServiceProvider: Code = "service.duplicate-provider"
        /// A module uses a service nothing provides.
        public static let missingServiceProvider: Code = "service.missing-provider"
        /// Service factories depend on each other in a cycle.
        public static let serviceCycle: Code = "service.cycle"
        /// A singleton depends on a transient or cached service.
        public static let captiveService: Code = "service.captive-dependency"
        /// The host's standard does not meet a module's requirement.
        public static let standardMismatch: Code = "service.standard-mismatch"

        // Contributions
        /// A module contributes to a point the host does not declare; the contribution is ignored.
        public static let unknownExtensionPoint: Code = "contribution.unknown-point"
        /// A contribution's content is not the type its point takes.
        public static let contentTypeMismatch: Code = "contribution.content-type"
        /// Two contributions to one point share an identifier.
        public static let duplicateContribution: Code = "contribution.duplicate-id"
        /// A point has more or fewer contributions than its cardinality allows.
        public static let cardinalityViolated: Code = "contribution.cardinality"
        /// A contribution names, as the tab it is a page of, a tab no module declares.
        public static let unknownTab: Code = "contribution.unknown-tab"

        // Deeplinks
        /// Two handlers for one feature and action.
        public static let duplicateDeeplinkHandler: Code = "deeplink.duplicate-handler"

        // Shared state
        /// Persisted state could not be read, or cannot be persisted.
        public static let statePersistence: Code = "state.persistence"

        // Authorization
        /// A module needs an entitlement the host has not granted.
        public static let missingEntitlement: Code = "authorization.missing-entitlement"
        /// The entitlement policy that instances share could not be read; the one read last is kept (nothing is
        /// granted before the first read), and it is read again until it can be.
        public static let storedPolicyUnavailable: Code = "authorization.stored-policy-unavailable"

        // Activation
        /// A module starts on demand, and nothing in the app starts it.
        public static let startsOnDemand: Code = "activation.on-demand"

        // Runtime
        /// A module's `activate` threw.
        public static let activationFailed: Code = "activation.failed"
        /// A module's `activate` did not finish within the time limit.
        public static let activationTimedOut: Code = "activation.timed-out"
        /// A module's `deactivate` did not finish within the time limit.
        public static let deactivationTimedOut: Code = "deactivation.timed-out"
        /// A module's lifecycle-phase participant threw.
        public static let participantFailed: Code = "phase.participant-failed"
        /// A module's lifecycle-phase participant did not finish within the time limit.
        public static let participantTimedOut: Code = "phase.participant-timed-out"
        /// A module's host-event listener threw or did not finish within the time limit.
        public static let listenerFailed: Code = "host-event.listener-failed"

        // Isolation
        /// An isolated module's process ended while the module ran (a trap, a signal, an exit, a closed pipe).
        public static let processEnded: Code = "isolation.process-ended"
        /// A module declares what cannot cross to a process of its own (content that is not `Codable`, say).
        public static let cannotCross: Code = "isolation.cannot-cross"
        /// The host asks to isolate a module (``IsolationOptions/modules``) that its catalog does not have.
        public static let unknownIsolatedModule: Code = "isolation.unknown-module"
    }
}

extension Sequence<Diagnostic> {
    /// The diagnostics of `severity` or worse.
    public func filter(atLeast severity: Diagnostic.Severity) -> [Diagnostic] {
        filter { $0.severity >= severity }
    }
}
