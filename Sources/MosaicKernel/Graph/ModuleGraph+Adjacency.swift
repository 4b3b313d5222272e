internal import Mosaic

/// One list of module positions per module, all in one flat array: a graph's edges then take three allocations,
/// not two per module, and reading them reads memory laid out in module order.
struct Adjacency: Sendable {
    /// Every list, one after another.
    private var positions: [Int] = []
    /// The list of module `m` is `positions[bounds[m]..<bounds[m + 1]]`.
    private var bounds: [Int] = [0]

    init() {}

    /// The list of the module at `position`.
    subscript(position: Int) -> ArraySlice<Int> { positions[bounds[position]..<bounds[position + 1]] }

    /// The list being built: what was appended since the last list ended.
    fileprivate var building: ArraySlice<Int> { positions[bounds[bounds.count - 1]...] }

    fileprivate mutating func append(_ position: Int) { positions.append(position) }
    fileprivate mutating func endList() { bounds.append(positions.count) }

    fileprivate mutating func reserve(lists: Int, positions count: Int) {
        bounds.reserveCapacity(lists + 1)
        positions.reserveCapacity(count)
    }
}

extension ModuleGraph {
    /// An edge by module positions: validation accepted that module `from` depends on module `to` (declared, or by
    /// using a service it provides). Positions are 32-bit: a graph makes several of these per module.
    struct PositionalEdge {
        let from: Int32
        let to: Int32
        let isOptional: Bool

        init(_ from: Int, to: Int, optional: Bool) {
            self.from = Int32(from)
            self.to = Int32(to)
            self.isOptional = optional
        }
    }

    /// Lays out every module's edges from the edges validation made: `declared` (from manifests) and `used` (from
    /// service use), each made module by module in position order. A module required once is not also optional,
    /// each target is listed once in the order first named, and a module's dependents are in position order.
    mutating func connect(declared: [PositionalEdge], used: [PositionalEdge]) {
        var required = Adjacency()
        var optional = Adjacency()
        required.reserve(lists: nodes.count, positions: declared.count + used.count)
        optional.reserve(lists: nodes.count, positions: 0)
        var dependentCounts = [Int](repeating: 0, count: nodes.count + 1)
        // Adds `edge`'s target to its module's list being built, unless listed already (a required one in either).
        func place(_ edge: PositionalEdge) {
            let target = Int(edge.to)
            guard !required.building.contains(target) else { return }
            if edge.isOptional {
                guard !optional.building.contains(target) else { return }
                optional.append(target)
            } else {
                required.append(target)
            }
            dependentCounts[target + 1] += 1
        }
        var next = (declared: 0, used: 0)
        for module in nodes.indices {
            let first = next
            while next.declared < declared.count, declared[next.declared].from == module { next.declared += 1 }
            while next.used < used.count, used[next.used].from == module { next.used += 1 }
            // Required edges first, then optional ones: a target required by either list is not optional.
            for pass in [false, true] {
                for edge in declared[first.declared..<next.declared] where edge.isOptional == pass { place(edge) }
                for edge in used[first.used..<next.used] where edge.isOptional == pass { place(edge) }
            }
            required.endList()
            optional.endList()
        }
        // Dependents by counting: each module's list is placed at its offset, modules visited in position order.
        for module in nodes.indices { dependentCounts[module + 1] += dependentCounts[module] }
        var placed = dependentCounts
        var dependents = [Int](repeating: 0, count: dependentCounts[nodes.count])
        for module in nodes.indices {
            for target in required[module] {
                dependents[placed[target]] = module
                placed[target] += 1
            }
            for target in optional[module] {
                dependents[placed[target]] = module
                placed[target] += 1
            }
        }
        self.required = required
        self.optional = optional
        self.dependents = Adjacency(laidOut: dependents, bounds: dependentCounts)
    }

    /// Every dependency of the module at `position` that orders activation: required, then optional.
    func dependencies(of position: Int) -> [Int] {
        Array(required[position]) + optional[position]
    }
}

extension Adjacency {
    /// Lists already laid out: list `m` is `positions[bounds[m]..<bounds[m + 1]]`.
    fileprivate init(laidOut positions: [Int], bounds: [Int]) {
        self.positions = positions
        self.bounds = bounds
    }
}
