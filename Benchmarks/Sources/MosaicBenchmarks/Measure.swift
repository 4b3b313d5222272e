import Synchronization

/// Runs `body` `warmups` times unmeasured, then `runs` times, and returns every run's duration sorted.
func measure(warmups: Int = 2, runs: Int, _ body: () async throws -> Void) async rethrows -> Samples {
    for _ in 0..<warmups { try await body() }
    var durations: [Duration] = []
    for _ in 0..<runs {
        let start = ContinuousClock.now
        try await body()
        durations.append(start.duration(to: .now))
    }
    return Samples(durations: durations.sorted())
}

/// Sorted durations of repeated runs.
struct Samples {
    let durations: [Duration]

    var minimum: Duration { durations[0] }
    var median: Duration { durations[durations.count / 2] }
    var p90: Duration { durations[min(durations.count - 1, durations.count * 9 / 10)] }
}

extension Duration {
    var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) * 1e-9
    }

    var milliseconds: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) * 1e-15
    }
}

/// A fixed-width table row.
func row(_ cells: [String], widths: [Int]) -> String {
    zip(cells, widths).map { cell, width in
        cell.count >= width ? cell : cell + String(repeating: " ", count: width - cell.count)
    }.joined(separator: "  ")
}

func format(_ value: Double, places: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

/// Deliveries counted across observer tasks.
final class DeliveryCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// Fan-out timings in µs over `rounds` rounds (after 10 warm-ups): how long `trigger` takes to return, and how long
/// until each of `observers` tasks, every one draining its own stream from `subscribe`, has seen an element
/// `accept`s.
func fanOut<Updates: AsyncSequence<Updates.Element, Never> & Sendable>(
    observers: Int, rounds: Int = 50, subscribe: () -> Updates,
    accept: @escaping @Sendable (Updates.Element) -> Bool = { _ in true },
    trigger: (_ round: Int) async throws -> Void
) async rethrows -> FanOutTimings {
    try await fanOut(
        observers: observers, rounds: rounds,
        spawn: { received in
            let stream = subscribe()
            Task {
                for await element in stream where accept(element) { received() }
            }
        }, trigger: trigger)
}

/// Fan-out timings in µs: `returns` is the median time `trigger` took, `delivered` (and `deliveredP90`) the time
/// until every observer had the element.
struct FanOutTimings {
    let returns: Double
    let delivered: Double
    let deliveredP90: Double
}

/// Fan-out timings over `rounds` rounds (after 10 warm-ups) for `observers` tasks that `spawn` starts, each calling
/// `received` once per element it gets.
func fanOut(
    observers: Int, rounds: Int = 50, spawn: (_ received: @escaping @Sendable () -> Void) -> Void,
    trigger: (_ round: Int) async throws -> Void
) async rethrows -> FanOutTimings {
    let counter = DeliveryCounter()
    let (done, signal) = AsyncStream.makeStream(of: Int.self)
    for _ in 0..<observers {
        spawn {
            let total = counter.value.add(1, ordering: .relaxed).newValue
            if total.isMultiple(of: observers) { signal.yield(total) }
        }
    }
    var doneIterator = done.makeAsyncIterator()
    var returns: [Double] = []
    var delivered: [Double] = []
    for round in 1...(rounds + 10) {
        let start = ContinuousClock.now
        try await trigger(round)
        returns.append(start.duration(to: .now).nanoseconds / 1_000)
        _ = await doneIterator.next()
        delivered.append(start.duration(to: .now).nanoseconds / 1_000)
    }
    let returned = returns.dropFirst(10).sorted()
    let all = delivered.dropFirst(10).sorted()
    return FanOutTimings(returns: returned[rounds / 2], delivered: all[rounds / 2], deliveredP90: all[rounds * 9 / 10])
}
