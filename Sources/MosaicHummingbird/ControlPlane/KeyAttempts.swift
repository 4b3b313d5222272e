internal import Mosaic
internal import MosaicKernel
internal import Synchronization

/// The wrong operator keys each client presented lately, so that guessing is slowed: after ``limit`` within
/// ``window``, a client is refused, whatever it presents, until its window is over.
final class KeyAttempts: Sendable {
    /// Wrong keys a client may present within a window.
    static let limit = 5
    /// How long a client's wrong keys are counted.
    static let window = Duration.seconds(60)
    /// The most clients counted at once; beyond, the one whose window began first is forgotten.
    static let clients = 10_000

    private struct Attempts {
        var count: Int
        var since: Duration
    }

    private let clock: KernelClock
    private let attempts = Locked<[String: Attempts]>([:])

    init(clock: any Clock<Duration>) {
        self.clock = KernelClock(clock)
    }

    /// How long `client` must wait before its next key is read, or `nil` when it may present one now.
    func wait(for client: String) -> Duration? {
        let now = clock.now()
        return attempts.withLock { attempts in
            guard let counted = attempts[client] else { return nil }
            guard now - counted.since < Self.window else {
                attempts[client] = nil
                return nil
            }
            return counted.count >= Self.limit ? Self.window - (now - counted.since) : nil
        }
    }

    /// `client` presented a wrong key.
    func failed(_ client: String) {
        let now = clock.now()
        attempts.withLock { attempts in
            if let counted = attempts[client], now - counted.since < Self.window {
                attempts[client]?.count += 1
                return
            }
            if attempts.count >= Self.clients, let oldest = attempts.min(by: { $0.value.since < $1.value.since }) {
                attempts[oldest.key] = nil
            }
            attempts[client] = Attempts(count: 1, since: now)
        }
    }

    /// `client` presented the key: its count starts again.
    func succeeded(_ client: String) {
        attempts.withLock { _ = $0.removeValue(forKey: client) }
    }
}
