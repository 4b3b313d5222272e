internal import Mosaic

extension ModuleGraph {
    /// Orders the modules that are not in a cycle into levels: level 0 depends on nothing, and every module sits
    /// one level above its deepest dependency. Linear in modules plus dependencies.
    mutating func plan() {
        let adjacency = dependencyAdjacency()
        let inCycle = ids.map { nodes[$0]?.inCycle == true }
        var waiting = [Int](repeating: 0, count: ids.count)
        var dependents = [[Int]](repeating: [], count: ids.count)
        for (module, dependencies) in adjacency.enumerated() where !inCycle[module] {
            for dependency in dependencies where !inCycle[dependency] {
                waiting[module] += 1
                dependents[dependency].append(module)
            }
        }
        var level = (0..<ids.count).filter { !inCycle[$0] && waiting[$0] == 0 }
        var levels: [[ModuleID]] = []
        while !level.isEmpty {
            levels.append(level.map { ids[$0] })
            var next: [Int] = []
            for module in level {
                for dependent in dependents[module] {
                    waiting[dependent] -= 1
                    if waiting[dependent] == 0 { next.append(dependent) }
                }
            }
            level = next.sorted()
        }
        self.levels = levels
        self.activationOrder = levels.flatMap { $0 }
    }
}
