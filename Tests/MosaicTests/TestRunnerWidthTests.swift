import Foundation
import Testing

@Suite struct TestRunnerWidthTests {
    @Test("the suite runs a bounded number of test cases at once (Tests/TestRunnerWidth/width.c)")
    func widthIsSet() throws {
        let width = try #require(ProcessInfo.processInfo.environment["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"])
        #expect((Int(width) ?? 0) > 0)
    }
}
