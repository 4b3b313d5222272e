import GRDB
import Testing

@testable import MosaicKernel

@Suite struct DatabaseFileTests {
    @Test("a state database that let its lock go never takes it again, so the next kernel owns the outbox")
    func releasedLockStaysReleased() async throws {
        let directory = try temporaryDirectory()
        let first = DatabaseFile(directory: directory, busyMode: .immediateError) { _, _ in }
        // Let go before the open ends, as a shutdown that comes while a late call opens the database.
        first.releaseLock()
        #expect(try await first.database().ownsOutbox == false)
        let next = DatabaseFile(directory: directory, busyMode: .immediateError) { _, _ in }
        #expect(try await next.database().ownsOutbox)
        next.releaseLock()
    }
}
