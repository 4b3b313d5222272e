import Mosaic
import Synchronization
import Testing

protocol Greeter: Sendable { func greet() -> String }

extension ServiceKey where Value == any Greeter {
    static var greeter: Self { Self() }
}
final class Counter: Sendable {
    let builds = Atomic<Int>(0)
}
struct EnglishGreeter: Greeter {
    init(counter: Counter) { counter.builds.add(1, ordering: .relaxed) }
    func greet() -> String { "hello" }
}
struct MockGreeter: Greeter { func greet() -> String { "mock" } }

/// A table of everything `registrar` provides, active, and a view that sees all of it.
private func services(_ configure: (inout ServiceRegistrar) -> Void) -> Services {
    var registrar = ServiceRegistrar()
    configure(&registrar)
    let boxes = registrar.provided.map { $0.makeBox("com.test.provider", false) }
    for box in boxes { box.activate() }
    let table = ServiceTable(boxes)
    return Services(module: "com.test.consumer", visible: table, all: table)
}

@Suite struct ServiceTableTests {
    @Test("a singleton is built exactly once when 1,000 tasks resolve it first at the same time")
    func singletonOnce() async throws {
        let counter = Counter()
        let view = services { $0.singleton(.greeter) { EnglishGreeter(counter: counter) } }
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1_000 { group.addTask { try view.resolve(.greeter).greet() } }
            for try await greeting in group { #expect(greeting == "hello") }
        }
        #expect(counter.builds.load(ordering: .relaxed) == 1)
    }

    @Test("a transient is built for every resolution; a factory's parameters are resolved for it")
    func transientAndDependencies() throws {
        let counter = Counter()
        let view = services {
            $0.singleton(ServiceKey(Counter.self)) { counter }
            $0.transient(.greeter) { (counter: Counter) in EnglishGreeter(counter: counter) }
        }
        for _ in 0..<5 { _ = try view.resolve(.greeter) }
        #expect(counter.builds.load(ordering: .relaxed) == 5)
        #expect(try view.resolve(.greeter).greet() == "hello")
    }

    @Test("parallel scopes with conflicting overrides never see each other's")
    func parallelOverrides() async throws {
        let view = services { $0.singleton(.greeter) { EnglishGreeter(counter: Counter()) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    var overrides = OverrideScope()
                    overrides.override((any Greeter).self) { NamedGreeter(name: "mock-\(index)") }
                    try await OverrideScope.withScope(overrides) {
                        await Task.yield()
                        let greeting = try view.resolve(.greeter).greet()
                        #expect(greeting == "mock-\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try view.resolve(.greeter).greet() == "hello")
    }

    @Test("a throwing factory names the service and the module, and later resolutions still work")
    func throwingFactory() throws {
        let attempts = Counter()
        let view = services {
            $0.singleton(.greeter) { () throws -> any Greeter in
                if attempts.builds.add(1, ordering: .relaxed).newValue == 1 { throw Flaky() }
                return MockGreeter()
            }
        }
        let error = #expect(throws: ServiceError.self) { try view.resolve(.greeter) }
        #expect(error?.code == .factoryFailed)
        #expect(error?.message == "the factory of MosaicTests.Greeter in com.test.provider threw: flaky")
        #expect(try view.resolve(.greeter).greet() == "mock")
    }

    @Test("unimplemented placeholders fail with a message that names the missing wiring")
    func unimplementedPlaceholder() {
        let view = services {
            $0.singleton(.greeter, rank: .fallback) { () throws -> any Greeter in try unimplemented("greeter")
            }
        }
        let error = #expect(throws: ServiceError.self) { try view.resolve(.greeter) }
        #expect(error?.code == .unimplemented)
        #expect(error?.message.hasPrefix("greeter is not wired") == true)
    }

    @Test("a deactivated provider's service says so, and comes back rebuilt when reactivated")
    func inactiveProvider() throws {
        let counter = Counter()
        let (box, view) = provider((any Greeter).self) { EnglishGreeter(counter: counter) }
        _ = try view.resolve(.greeter)
        ServiceBox.deactivate([box])
        let error = #expect(throws: ServiceError.self) { try view.resolve(.greeter) }
        #expect(error?.code == .providerInactive)
        #expect(error?.message.contains("com.test.provider, which is not active now") == true)
        box.activate()
        _ = try view.resolve(.greeter)
        #expect(counter.builds.load(ordering: .relaxed) == 2)
    }

    @Test("resolving an undeclared or unprovided service explains which")
    func undeclared() {
        let view = services { _ in }
        let error = #expect(throws: ServiceError.self) { try view.resolve(.greeter) }
        #expect(error?.code == .noProvider)
    }
}

struct NamedGreeter: Greeter {
    let name: String
    func greet() -> String { name }
}

struct Flaky: Error, CustomStringConvertible { var description: String { "flaky" } }
