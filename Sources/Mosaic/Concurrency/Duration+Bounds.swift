extension Duration {
    /// The longest wait a timer is given: about 35,000 years. Clocks and NIO count a sleep in 64-bit seconds or
    /// nanoseconds, so a limit meant as "never" (`.seconds(.max)`) would overflow into a trap.
    package static let longestWait = Duration.seconds(Int64(1) << 40)

    /// The duration, at most ``longestWait`` (and at least zero): what a timer may be set to.
    package var bounded: Duration { Swift.min(Swift.max(self, .zero), Self.longestWait) }

    /// The duration in nanoseconds, saturating instead of overflowing.
    package var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return nanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
