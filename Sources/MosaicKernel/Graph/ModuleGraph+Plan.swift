extension ModuleGraph {
    /// Orders the modules that are not in a cycle into levels: level 0 depends on nothing, and every module sits
    /// one level above its deepest dependency. Linear in modules plus dependencies.
    mutating func plan() {
        // Read once, in order: looking each edge's module up in `nodes` read a node from all over memory.
        let inCycle = nodes.map(\.inCycle)
        var waiting = [Int](repeating: 0, count: nodes.count)
        for module in nodes.indices where !inCycle[module] {
            for dependency in required[module] where !inCycle[dependency] { waiting[module] += 1 }
            for dependency in optional[module] where !inCycle[dependency] { waiting[module] += 1 }
        }
        var level = nodes.indices.filter { !inCycle[$0] && waiting[$0] == 0 }
        var levels: [[Int]] = []
        while !level.isEmpty {
            levels.append(level)
            var next: [Int] = []
            for module in level {
                for dependent in dependents[module] where !inCycle[dependent] {
                    waiting[dependent] -= 1
                    if waiting[dependent] == 0 { next.append(dependent) }
                }
            }
            level = next.sorted()
        }
        self.levels = levels.map(ids)
        self.order = levels.flatMap { $0 }
    }
}
