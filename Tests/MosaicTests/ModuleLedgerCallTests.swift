import Mosaic
import Synchronization
import Testing

/// A lost wake-up leaves `quiesce()` waiting for ever, which cancellation cannot end: the time limit names the test
/// that hangs.
@Suite("A module ledger's calls", .timeLimit(.minutes(1)))
struct ModuleLedgerCallTests {
    @Test("quiescing refuses new calls and goes on only once the calls under way have ended")
    func quiescingWaitsForTheCallsUnderWay() async {
        let ledger = ModuleLedger(module: "com.test.calls")
        #expect(ledger.beginCall())
        #expect(ledger.beginCall())
        let quiesced = Locked(false)
        let quiescing = Task {
            await ledger.quiesce()
            quiesced.withLock { $0 = true }
        }
        // Quiescing refuses calls before it waits for the ones under way.
        while ledger.beginCall() {
            ledger.endCall()
            await Task.yield()
        }
        ledger.endCall()
        #expect(!quiesced.withLock { $0 }, "one call is still under way")
        ledger.endCall()
        await quiescing.value
        #expect(!ledger.beginCall())
    }

    @Test(
        "a last call ending on another thread while quiescing starts to wait never leaves it waiting",
        .timeLimit(.minutes(1)))
    func aLastCallEndingMeanwhileWakesQuiescing() async {
        for _ in 0..<2_000 {
            let ledger = ModuleLedger(module: "com.test.calls")
            #expect(ledger.beginCall())
            async let quiesced: Void = ledger.quiesce()
            let ending = Task.detached { ledger.endCall() }
            await quiesced
            await ending.value
            #expect(!ledger.beginCall())
        }
    }

    @Test("a withdrawn ledger refuses calls")
    func aWithdrawnLedgerRefusesCalls() {
        let ledger = ModuleLedger(module: "com.test.calls")
        #expect(ledger.beginCall())
        ledger.endCall()
        ledger.withdraw()
        #expect(!ledger.beginCall())
    }
}
