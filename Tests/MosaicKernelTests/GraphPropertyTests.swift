import Mosaic
import MosaicKernel
import PropertyBased
import Testing

/// Random module graphs: `count` modules named m0…m(count-1); each edge (a, b) makes module a depend on b.
private struct RandomGraph: CustomStringConvertible {
    var count: Int
    var edges: [(Int, Int)]
    var optional: Set<Int>

    func id(_ index: Int) -> ModuleID { ModuleID("com.random.m\(index)") }

    var dependencies: [[Int]] {
        var dependencies = [[Int]](repeating: [], count: count)
        for (from, to) in edges where !dependencies[from].contains(to) { dependencies[from].append(to) }
        return dependencies
    }

    func factories(log: EventLog? = nil) -> [ModuleFactory] {
        dependencies.enumerated().map { index, targets in
            probe(
                id(index),
                requires: targets.enumerated().map { position, target in
                    .module(id(target), optional: optional.contains(index * 31 + position))
                }, log: log)
        }
    }

    /// Whether `start` can reach itself by following dependencies: an oracle independent of the kernel's.
    func isOnCycle(_ start: Int) -> Bool {
        var seen: Set<Int> = []
        var frontier = dependencies[start]
        while let next = frontier.popLast() {
            if next == start { return true }
            if seen.insert(next).inserted { frontier += dependencies[next] }
        }
        return false
    }

    var description: String { "\(count) modules, edges \(edges.map { "\($0.0)→\($0.1)" }.joined(separator: " "))" }
}

/// Any directed graph of up to 20 modules, cycles allowed.
private let anyGraph = zip(
    Gen.int(in: 1...20),
    zip(Gen.int(in: 0...19), Gen.int(in: 0...19)).array(of: 0...40),
    Gen.int(in: 0...700).array(of: 0...10)
).map { count, edges, optional in
    RandomGraph(count: count, edges: edges.map { ($0 % count, $1 % count) }, optional: Set(optional))
}

/// Acyclic graphs only: every edge points from a later module to an earlier one.
private let acyclicGraph = anyGraph.map(acyclic)

/// Acyclic graphs of 100 to 300 modules and up to 900 edges: more modules than the kernel starts ahead of one or two
/// workers, so that which of the ready modules it starts first matters.
private let largeAcyclicGraph = zip(
    Gen.int(in: 100...300), zip(Gen.int(in: 0...299), Gen.int(in: 0...299)).array(of: 0...900)
).map { count, edges in
    acyclic(RandomGraph(count: count, edges: edges.map { ($0 % count, $1 % count) }, optional: []))
}

private func acyclic(_ graph: RandomGraph) -> RandomGraph {
    var graph = graph
    graph.edges = graph.edges.compactMap { $0 == $1 ? nil : (max($0, $1), min($0, $1)) }
    return graph
}

@Suite struct GraphPropertyTests {
    @Test("over 1,000 random graphs the activation order respects every edge, and every reported cycle is real")
    func orderAndCycles() async {
        await propertyCheck(count: 1_000, input: anyGraph) { random in
            let graph = ModuleGraph(catalog: catalog(random.factories()), host: testHost)
            let position = Dictionary(uniqueKeysWithValues: graph.activationOrder.enumerated().map { ($1, $0) })
            #expect(position.count == graph.activationOrder.count, "each module once")
            for index in 0..<random.count {
                #expect(
                    (position[random.id(index)] == nil) == random.isOnCycle(index),
                    "m\(index) is left out of the order exactly when it is on a cycle: \(random)")
            }
            for (from, to) in random.edges {
                guard let dependent = position[random.id(from)], let dependency = position[random.id(to)] else {
                    continue
                }
                #expect(dependency < dependent, "m\(to) before m\(from): \(random)")
            }
            let edges = Set(random.edges.map { "\(random.id($0.0))>\(random.id($0.1))" })
            for cycle in graph.diagnostics.with(.dependencyCycle) {
                let path = cycle.modules + [cycle.modules[0]]
                for (from, to) in zip(path, path.dropFirst()) {
                    #expect(
                        edges.contains("\(from)>\(to)"), "reported cycle \(cycle.modules) uses a real edge: \(random)")
                }
                #expect(Set(cycle.modules).count == cycle.modules.count, "a cycle visits each module once")
            }
            let onCycles = Set((0..<random.count).filter(random.isOnCycle).map(random.id))
            let reported = Set(graph.diagnostics.with(.dependencyCycle).flatMap(\.modules))
            #expect(reported == onCycles, "every module on a cycle appears in a reported cycle: \(random)")
        }
    }

    @Test("over 1,000 random acyclic graphs booted for real, no module starts before its dependencies finished")
    func kernelRespectsEdges() async {
        await propertyCheck(count: 1_000, input: acyclicGraph, Gen.int(in: 1...6)) { random, width in
            try await bootRespectsEdges(random, width: width)
        }
    }

    @Test(
        "over 40 random acyclic graphs of more modules than the kernel starts ahead of its workers, every module still starts after its dependencies and stops before them",
        .timeLimit(.minutes(1)))
    func kernelRespectsEdgesBeyondItsWindow() async {
        await propertyCheck(count: 40, input: largeAcyclicGraph, Gen.int(in: 1...2)) { random, width in
            try await bootRespectsEdges(random, width: width)
        }
    }

    private func bootRespectsEdges(_ random: RandomGraph, width: Int) async throws {
        let log = EventLog()
        let kernel = Kernel(
            catalog: catalog(random.factories(log: log)), host: testHost,
            options: KernelOptions(maximumConcurrentActivations: width), logger: quietLogger)
        let report = try await kernel.boot()
        #expect(report.count("active") == random.count, "\(random)")
        for (from, to) in random.edges {
            // A module missing from the log fails the check.
            let finished = log.position(of: .activated(random.id(to))) ?? .max
            let started = log.position(of: .activationStarted(random.id(from))) ?? -1
            #expect(finished < started, "m\(to) before m\(from): \(random)")
        }
        await kernel.shutdown()
        let stopped = Dictionary(uniqueKeysWithValues: log.deactivations.enumerated().map { ($1, $0) })
        #expect(stopped.count == random.count, "every module stops: \(random)")
        for (from, to) in random.edges {
            let (dependent, dependency) = (stopped[random.id(from)] ?? .max, stopped[random.id(to)] ?? -1)
            #expect(dependent < dependency, "m\(from) stops before m\(to): \(random)")
        }
    }
}
