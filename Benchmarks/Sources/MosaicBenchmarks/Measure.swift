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
