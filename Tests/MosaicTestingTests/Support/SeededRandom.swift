import Foundation

/// A repeatable random number generator (SplitMix64) for tests that try many random inputs: the seed comes from
/// `MOSAIC_TEST_SEED` when set, so a failure can be replayed, and is otherwise new each run; tests put
/// ``description`` in their failure messages.
struct SeededRandom: RandomNumberGenerator, CustomStringConvertible {
    /// The seed this generator started from.
    let seed: UInt64
    private var state: UInt64

    init(seed: UInt64? = nil) {
        let seed =
            seed ?? ProcessInfo.processInfo.environment["MOSAIC_TEST_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: .min ... .max)
        self.seed = seed
        self.state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// What a failure message says so that the run can be replayed.
    var description: String { "seed \(seed) (replay with MOSAIC_TEST_SEED=\(seed))" }
}
