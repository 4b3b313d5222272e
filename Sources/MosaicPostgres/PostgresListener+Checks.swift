internal import Mosaic
internal import MosaicKernel
internal import PostgresNIO
internal import Synchronization

/// How the listener knows whether storage answers: it probes the pool with a query of its own at the heartbeat's
/// pace, and ``checks()`` report the storage and the change feed from those probes and the listening connection.
extension PostgresListener {
    /// Probes the pool (``probe(finished:)``) unless the last probe's query is still waiting and has not been
    /// given up on yet, so that probes never pile up faster than one per two heartbeats.
    func probePool() {
        let now = ContinuousClock.now
        let start = state.withLock { state -> Bool in
            if let probing = state.probing, now - probing <= heartbeat * 2 { return false }
            state.probing = now
            return true
        }
        guard start else { return }
        Task {
            _ = await probe { [weak self] in
                self?.state.withLock { if $0.probing == now { $0.probing = nil } }
            }
        }
    }

    /// Runs a query on the pool, so that ``checks()`` learn whether storage answers even when nothing else queries
    /// it; whether it answered. A probe that has no answer within two heartbeats (waiting for a connection the pool
    /// cannot make, say) is given up on and recorded as a failure; it returns then, while its query may go on, and
    /// `finished` runs once the query has ended.
    func probe(finished: @escaping @Sendable () -> Void = {}) async -> Bool {
        let (connections, heartbeat, events) = (connections, heartbeat, events.continuation)
        let number = state.withLock { state in
            state.probes += 1
            return state.probes
        }
        let noteFailure: @Sendable (String?) -> Void = { [weak self] failure in
            self?.state.withLock { state in
                guard state.probes == number else { return }
                state.probeFailure = failure.map { ($0, state.probeFailure?.since ?? .now) }
            }
        }
        let (answer, answered) = AsyncStream.makeStream(of: Bool.self)
        // The query and the time limit race in a task of their own, which the answer does not wait for.
        Task {
            // `nil`: the time was up first.
            await withTaskGroup(of: Bool?.self) { group in
                // The probe is also the instance's heartbeat in the list of live instances.
                group.addTask {
                    do {
                        _ = try await connections.run(connections.seen, within: heartbeat)
                        noteFailure(nil)
                        return true
                    } catch let error as PostgresBackendError where error.code != .failed {
                        noteFailure("\(error)")
                        return false
                    } catch {
                        return false
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: (heartbeat * 2).bounded)
                    return nil
                }
                let first = await group.next() ?? nil
                // Only a finished query stops the timer. The query is never cancelled: a lease cancelled while the
                // pool connects was seen unanswered for minutes after the server came back; it ends by its own limit.
                if first != nil { group.cancelAll() }
                if first == nil {
                    let failure = PostgresBackendError(
                        .timedOut,
                        "\(connections.url) did not answer a probe within \(heartbeat * 2). Check that the server runs "
                            + "and is reachable.")
                    connections.recordFailure(failure)
                    noteFailure("\(failure)")
                }
                events.yield(.probed(answered: first == true))
                answered.yield(first == true)
            }
            finished()
        }
        for await value in answer { return value }
        return false
    }

    /// The server process of the listening connection, for tests that stop it.
    var backend: Int32? { state.withLock { $0.backend } }

    /// How the storage and the change feed stand now.
    func checks() -> [ReadinessCheck] {
        let now = ContinuousClock.now
        let (alive, probeFailure) = state.withLock { ($0.alive, $0.probeFailure) }
        let answers = connections.answers()
        // While a probe's failure stands, storage last passed when the probes began to fail, whatever answered since.
        let lastPassed = answers.lastAnswer.map { last in probeFailure.map { min($0.since, last) } ?? last }
        var storage = ReadinessCheck(
            name: "external storage", passing: true, detail: "\(connections.url) answers",
            sincePassed: lastPassed.map { now - $0 })
        if let failure = answers.lastFailure?.error ?? probeFailure?.message {
            storage = ReadinessCheck(
                name: storage.name, passing: false, detail: failure, sincePassed: storage.sincePassed)
        }
        let feed: ReadinessCheck
        if let alive, now - alive <= bound {
            feed = ReadinessCheck(
                name: "change feed", passing: true,
                detail: "proven alive; other instances' changes arrive within \(bound)", sincePassed: now - alive)
        } else {
            feed = ReadinessCheck(
                name: "change feed", passing: false,
                detail: "not proven alive within \(bound), so another instance's change (a revoke among them) may not "
                    + "have arrived; reconnecting. Check that \(connections.url) is reachable.",
                sincePassed: alive.map { now - $0 })
        }
        return [storage, feed]
    }
}
