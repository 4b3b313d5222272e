import Foundation

/// Runs `body`, which blocks (waits for a child process, reads a pipe), on a thread of its own: the cooperative
/// pool has as many threads as cores (two on CI), and a test blocking one of them slows every other test's tasks.
func offThePool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result(catching: body)) }
    }
}
