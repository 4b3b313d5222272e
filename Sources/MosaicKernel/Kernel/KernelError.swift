public import Mosaic

/// Why the kernel refused an operation.
public struct KernelError: Error, Sendable, CustomStringConvertible {
    /// The kind of refusal; new codes may be added.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The code as written, such as `not-booted`.
        public let rawValue: String
        /// Wraps a string; match codes with the static members rather than building them.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code as written: ``rawValue``.
        public var description: String { rawValue }

        /// `boot()` was called a second time.
        public static let alreadyBooted = Code(rawValue: "already-booted")
        /// The operation needs a booted kernel.
        public static let notBooted = Code(rawValue: "not-booted")
        /// The kernel was shut down.
        public static let shutDown = Code(rawValue: "shut-down")
        /// A module to install did not validate against the running graph.
        public static let installRefused = Code(rawValue: "install-refused")
        /// A module to uninstall is required by others.
        public static let uninstallRefused = Code(rawValue: "uninstall-refused")
        /// No module has the given identifier.
        public static let unknownModule = Code(rawValue: "unknown-module")
        /// The caller was cancelled while its operation waited for the ones before it; nothing changed.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The external storage (``KernelOptions/externalStorage``) could not record the change; nothing changed.
        public static let storageUnavailable = Code(rawValue: "storage-unavailable")
    }

    /// The kind of refusal.
    public let code: Code
    /// What happened and what to do.
    public let message: String
    /// The module concerned, when there is one.
    public let module: ModuleID?
    /// The problems behind the refusal, when there are any.
    public let diagnostics: [Diagnostic]

    init(_ code: Code, _ message: String, module: ModuleID? = nil, diagnostics: [Diagnostic] = []) {
        self.code = code
        self.message = message
        self.module = module
        self.diagnostics = diagnostics
    }

    /// The message, then each diagnostic behind the refusal on its own indented line.
    public var description: String {
        ([message] + diagnostics.map { "  \($0)" }).joined(separator: "\n")
    }
}
