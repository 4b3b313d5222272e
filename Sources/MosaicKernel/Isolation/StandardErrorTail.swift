internal import Foundation

/// The last lines of a child's standard error, cut into lines as the bytes arrive.
struct StandardErrorTail {
    private(set) var lines: [String] = []
    private var partial = Data()
    private var keeping = 20
    private var inBacktrace = false

    init(keeping: Int = 20) { self.keeping = max(0, keeping) }

    /// Takes `data`; returns the lines it completes.
    mutating func append(_ data: Data) -> [String] {
        partial.append(data)
        var complete: [String] = []
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            complete.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial = Data(partial[(newline + 1)...])
        }
        // A child that writes without newlines is cut at 4 KiB, not kept whole.
        if partial.count > 4_096 {
            complete.append(String(decoding: partial, as: UTF8.self))
            partial = Data()
        }
        keep(complete)
        return complete
    }

    /// The line the child left unfinished, at the end of its stream.
    mutating func flush() -> [String] {
        guard !partial.isEmpty else { return [] }
        let line = [String(decoding: partial, as: UTF8.self)]
        partial = Data()
        keep(line)
        return line
    }

    private mutating func keep(_ new: [String]) {
        // The Swift runtime's backtrace of a crash follows its first line: the host logs it, and the report keeps
        // what the child wrote before it (the trap's message), which says more in a line.
        guard !inBacktrace else { return }
        var new = new[...]
        if let start = new.firstIndex(where: { $0.contains("Program crashed:") }) {
            inBacktrace = true
            new = new[...start]
        }
        lines.append(contentsOf: new.map { String($0.prefix(500)) })
        if lines.count > keeping { lines.removeFirst(lines.count - keeping) }
    }
}
