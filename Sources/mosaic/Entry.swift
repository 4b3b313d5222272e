import MosaicCommands
import MosaicTool

/// `mosaic`: the standalone tool; see `mosaic --help`.
@main
enum Entry {
    /// Runs the tool: exit 0 success, 1 diagnostics with errors, 2 a usage error.
    static func main() async { await MosaicCommands.main(MosaicCommandLine.self) }
}
