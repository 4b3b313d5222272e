// The thread sanitizer reports a data race inside Synchronization.Mutex on Linux with Swift 6.3 although every
// access is under the lock. Build and run:
//   swiftc -sanitize=thread -O MutexReproducer.swift -o /tmp/mutex-repro && /tmp/mutex-repro
// Without suppressions it reports "data race" in Mutex's withLock frames; with
// TSAN_OPTIONS=suppressions=suppressions.txt it prints "total 200000" and nothing else (in a debug build, as
// `swift test` makes: optimized, the body is inlined into its caller). With `--real-race` it also counts without
// the lock, and the sanitizer still reports that race with the suppressions in place.
import Dispatch
import Synchronization

final class Counter: Sendable {
    let value = Mutex(0)
}

nonisolated(unsafe) var unprotected = 0
let realRace = CommandLine.arguments.contains("--real-race")

let counter = Counter()
let group = DispatchGroup()
for _ in 0..<2 {
    DispatchQueue.global().async(group: group) {
        for _ in 0..<100_000 {
            counter.value.withLock { $0 += 1 }
            if realRace { unprotected += 1 }
        }
    }
}
group.wait()
print("total \(counter.value.withLock { $0 })")
