internal import Mosaic

extension ModuleGraph {
    /// The most cycles listed for one group of modules that depend on each other; a group can hold
    /// exponentially many, and a few are enough to see what to cut.
    public static let maximumCyclesListed = 20

    /// Every module in a dependency cycle is faulted, and each elementary cycle (up to
    /// ``maximumCyclesListed`` per strongly connected group) is reported with its full path.
    mutating func findCycles() {
        let adjacency = dependencyAdjacency()
        for component in cyclicComponents(adjacency) {
            let (listed, truncated) = elementaryCycles(in: component, adjacency)
            var cycles = listed
            if truncated {
                // Name every module of the group in at least one listed cycle, so that none is failed unexplained.
                for member in component where !cycles.contains(where: { $0.contains(member) }) {
                    cycles.append(shortestCycle(through: member, within: Set(component), adjacency))
                }
            }
            for (number, cycle) in cycles.enumerated() {
                let path = (cycle + [cycle[0]]).map { nodes[$0].id.rawValue }.joined(separator: " → ")
                var message = "\(path): these modules depend on each other, so none of them can activate first."
                if truncated, number == 0 {
                    message += " (\(component.count) modules are tangled here; more cycles exist than are listed.)"
                }
                report(
                    .dependencyCycle, .error, ids(cycle), message,
                    fix: "Remove one dependency of this path, or move what these modules share into a new module "
                        + "that each of them depends on.")
            }
            for member in component {
                let cycle = cycles.first { $0.contains(member) } ?? cycles[0]
                let path = (cycle + [cycle[0]]).map { nodes[$0].id.rawValue }.joined(separator: " → ")
                nodes[member].fault = "it is in the dependency cycle \(path)."
                nodes[member].inCycle = true
            }
        }
    }

    /// For each module, in catalog order, the catalog positions of the modules it depends on.
    func dependencyAdjacency() -> [[Int]] {
        nodes.indices.map(dependencies(of:))
    }

    /// The strongly connected components that contain a cycle (two or more modules, or one that depends on
    /// itself), each sorted, in catalog order. Tarjan's algorithm, iterative so that a 10,000-module chain cannot
    /// overflow the stack.
    private func cyclicComponents(_ adjacency: [[Int]]) -> [[Int]] {
        let count = adjacency.count
        var order = [Int](repeating: -1, count: count)
        var low = [Int](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count)
        var stack: [Int] = []
        var components: [[Int]] = []
        var counter = 0
        var work: [(node: Int, edge: Int)] = []
        for root in 0..<count where order[root] == -1 {
            func visit(_ node: Int) {
                order[node] = counter
                low[node] = counter
                counter += 1
                stack.append(node)
                onStack[node] = true
                work.append((node, 0))
            }
            visit(root)
            while let (node, edge) = work.last {
                if edge < adjacency[node].count {
                    work[work.count - 1].edge += 1
                    let next = adjacency[node][edge]
                    if order[next] == -1 {
                        visit(next)
                    } else if onStack[next] {
                        low[node] = min(low[node], order[next])
                    }
                    continue
                }
                work.removeLast()
                if let parent = work.last?.node { low[parent] = min(low[parent], low[node]) }
                guard low[node] == order[node] else { continue }
                if stack.last == node {  // A component of one module: the common case, without allocating.
                    stack.removeLast()
                    onStack[node] = false
                    if adjacency[node].contains(node) { components.append([node]) }
                    continue
                }
                var component: [Int] = []
                while let member = stack.popLast() {
                    onStack[member] = false
                    component.append(member)
                    if member == node { break }
                }
                if component.count > 1 || adjacency[node].contains(node) { components.append(component.sorted()) }
            }
        }
        return components.sorted { $0[0] < $1[0] }
    }

    /// The elementary cycles of one component, each starting at its earliest module in catalog order; stops after
    /// ``maximumCyclesListed`` cycles or a fixed amount of work, and says whether it stopped early.
    private func elementaryCycles(in component: [Int], _ adjacency: [[Int]]) -> (cycles: [[Int]], truncated: Bool) {
        let members = Set(component)
        var cycles: [[Int]] = []
        var budget = 200_000
        for start in component {
            var path = [start]
            var edges = [0]
            var onPath: Set<Int> = [start]
            while let node = path.last, let edge = edges.last {
                guard budget > 0, cycles.count < Self.maximumCyclesListed else { return (cycles, true) }
                guard edge < adjacency[node].count else {
                    onPath.remove(path.removeLast())
                    edges.removeLast()
                    continue
                }
                edges[edges.count - 1] += 1
                budget -= 1
                let next = adjacency[node][edge]
                if next == start {
                    cycles.append(path)
                } else if next > start, members.contains(next), !onPath.contains(next) {
                    path.append(next)
                    edges.append(0)
                    onPath.insert(next)
                }
            }
        }
        return (cycles, false)
    }

    /// The shortest cycle from `start` back to itself, found breadth-first; `start` must be on a cycle.
    private func shortestCycle(through start: Int, within members: Set<Int>, _ adjacency: [[Int]]) -> [Int] {
        var parent: [Int: Int] = [:]
        var frontier = [start]
        while !frontier.isEmpty {
            var next: [Int] = []
            for node in frontier {
                for target in adjacency[node] where members.contains(target) {
                    if target == start {
                        var path = [node]
                        while let previous = parent[path[path.count - 1]] { path.append(previous) }
                        return path.reversed()
                    }
                    if target != start, parent[target] == nil {
                        parent[target] = node
                        next.append(target)
                    }
                }
            }
            frontier = next
        }
        return [start]
    }
}
