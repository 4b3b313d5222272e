import Dispatch
import Foundation
import Mosaic
import Synchronization
import Testing

/// A slow synchronous factory's wait: it blocks its thread until a task opens the gate.
private final class FactoryGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    let entered: AsyncStream<Void>
    private let enter: AsyncStream<Void>.Continuation

    init() { (entered, enter) = AsyncStream.makeStream(of: Void.self) }

    /// Tells the test the factory runs, then blocks until ``open()``.
    func pass() {
        enter.yield()
        semaphore.wait()
    }

    func open() { semaphore.signal() }

    /// Returns once a factory is blocked at the gate.
    func factoryEntered() async {
        for await _ in entered { return }
    }
}

/// An observer that reports each caller that begins to await another's build.
private final class BuildWaits: ServiceObserver {
    let waits: AsyncStream<Void>
    private let wait: AsyncStream<Void>.Continuation

    init() { (waits, wait) = AsyncStream.makeStream(of: Void.self) }

    var countsResolves: Bool { false }
    func build<T>(_ key: AnyServiceKey, provider: ModuleID, _ body: () throws(ServiceError) -> T) throws(ServiceError)
        -> T
    { try body() }
    func resolveFailed(_ error: ServiceError, by module: ModuleID) {}
    func resolved(by module: ModuleID) {}
    func awaitingBuild(_ key: AnyServiceKey, provider: ModuleID) { wait.yield() }

    /// Returns once `count` callers await a build.
    func awaiting(_ count: Int) async {
        var seen = 0
        for await _ in waits {
            seen += 1
            if seen == count { return }
        }
    }
}

/// A greeter service built by `make`, active, in a table observed by `observer`.
private func greeter(
    observer: BuildWaits, _ make: @escaping @Sendable () throws -> any Greeter
) -> (box: ServiceBox, view: Services) {
    var registrar = ServiceRegistrar()
    registrar.singleton(.greeter) { () throws -> any Greeter in try make() }
    let box = registrar.provided[0].makeBox("com.test.provider", false)
    box.activate()
    let table = ServiceTable([box], observer: observer)
    return (box, Services(module: "com.test.consumer", visible: table, all: table))
}

/// Runs `body` on a thread of its own, not one of the cooperative pool's: a factory blocked at a gate must not hold a
/// thread that every other test of the run needs (the pool has as many as the machine has cores).
private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> Task<T, any Error> {
    Task {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

/// Serialized: each test blocks a thread in a factory; one at a time keeps the waits easy to follow.
@Suite(.serialized) struct ServiceBuildTests {
    /// More callers than the cooperative pool has threads.
    private let waiters = ProcessInfo.processInfo.activeProcessorCount + 2

    @Test("while a slow first build runs, more awaiting callers than the pool has threads hold none of them")
    func awaitedBuildHoldsNoThread() async throws {
        let counter = Counter()
        let gate = FactoryGate()
        let observer = BuildWaits()
        let (_, view) = greeter(observer: observer) {
            gate.pass()
            return EnglishGreeter(counter: counter)
        }
        let builder = onThread { try view.resolve(.greeter).greet() }
        await gate.factoryEntered()
        let waiting = (0..<waiters).map { _ in
            Task {
                try await view.awaitBuild(of: (any Greeter).self)
                return try view.resolve(.greeter).greet()
            }
        }
        await observer.awaiting(waiters)
        // The builder blocks a thread of its own; had the waiters each held one of the pool's, this would never run.
        let other = await Task { "other work" }.value
        #expect(other == "other work")
        gate.open()
        #expect(try await builder.value == "hello")
        for waiter in waiting { #expect(try await waiter.value == "hello") }
        #expect(counter.builds.load(ordering: .relaxed) == 1, "one builder; the others waited for its instance")
    }

    @Test("a synchronous resolve racing a first build waits for it and gets its instance: one build")
    func synchronousResolveWaits() async throws {
        let counter = Counter()
        let gate = FactoryGate()
        let (_, view) = greeter(observer: BuildWaits()) {
            gate.pass()
            return EnglishGreeter(counter: counter)
        }
        let builder = onThread { try view.resolve(.greeter).greet() }
        await gate.factoryEntered()
        // On a thread of its own: it waits holding that thread, and the pool must still open the gate.
        let second = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            Thread { done.resume(returning: try? view.resolve(.greeter).greet()) }.start()
            gate.open()
        }
        #expect(try await builder.value == "hello")
        #expect(second == "hello")
        #expect(counter.builds.load(ordering: .relaxed) == 1)
    }

    @Test("a first build that throws ends the others' wait, and one of them builds again")
    func failedBuildIsTriedAgain() async throws {
        let attempts = Counter()
        let gate = FactoryGate()
        let observer = BuildWaits()
        let (_, view) = greeter(observer: observer) { () throws -> any Greeter in
            guard attempts.builds.add(1, ordering: .relaxed).newValue > 1 else {
                gate.pass()
                throw Flaky()
            }
            return MockGreeter()
        }
        let builder = onThread { try view.resolve(.greeter) }
        await gate.factoryEntered()
        let waiting = (0..<waiters).map { _ in
            Task {
                try await view.awaitBuild(of: (any Greeter).self)
                return try view.resolve(.greeter).greet()
            }
        }
        await observer.awaiting(waiters)
        gate.open()
        let error = await #expect(throws: ServiceError.self) { try await builder.value }
        #expect(error?.code == .factoryFailed)
        for waiter in waiting { #expect(try await waiter.value == "mock") }
        #expect(attempts.builds.load(ordering: .relaxed) == 2, "the failed build, then one more")
    }

    @Test("a provider deactivated during its service's first build does not wait for it, nor keep what it built")
    func deactivationDuringBuild() async throws {
        let counter = Counter()
        let gate = FactoryGate()
        let (box, view) = greeter(observer: BuildWaits()) {
            if counter.builds.load(ordering: .relaxed) == 0 { gate.pass() }
            return EnglishGreeter(counter: counter)
        }
        let builder = onThread { try view.resolve(.greeter).greet() }
        await gate.factoryEntered()
        // Before, the build held the box's lock, and this waited for the factory.
        ServiceBox.deactivate([box])
        gate.open()
        #expect(try await builder.value == "hello", "the caller that built gets its instance")
        #expect(box.builtInstance() == nil)
        box.activate()
        #expect(try view.resolve(.greeter).greet() == "hello")
        #expect(counter.builds.load(ordering: .relaxed) == 2, "built again for the new activation")
    }
}
