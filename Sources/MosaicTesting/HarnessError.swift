public import MosaicKernel

/// Why a harness would not start: the problems validation found, each with its fix.
public struct HarnessError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure: the one thing to decide on, never the description's text; each diagnostic has its own
    /// `code` for the details.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Validation found errors in the modules under test (or in what they need); nothing was started.
        case invalidModules = "invalid-modules"
    }

    /// The kind of failure.
    public var code: Code { .invalidModules }
    /// The error-level diagnostics, in the kernel's order.
    public let diagnostics: [Diagnostic]

    init(_ diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics
    }

    /// Every diagnostic with its fix, and how to stand in for a service nothing provides when one is missing.
    public var description: String {
        var lines = ["The modules under test cannot start:"] + diagnostics.map { "  - \($0)" }
        if diagnostics.contains(where: { $0.code == .missingServiceProvider }) {
            lines.append(
                "In a test, stand in for a service nothing provides with harness.override(<the service's key>) { … }, "
                    + "or load the module that provides it.")
        }
        return lines.joined(separator: "\n")
    }
}
