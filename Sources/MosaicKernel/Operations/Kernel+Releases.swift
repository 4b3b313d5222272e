package import Mosaic

/// One object a module held as it began to deactivate, watched without keeping it alive.
struct WatchedObject {
    /// Its type, qualified: `GhostApp.SampleWeather`.
    let type: String
    weak var object: AnyObject?
}

/// What outlives a module once it is deactivated (``KernelOptions/watchesReleases``), for MosaicTesting's
/// `expectReleased`.
extension Kernel {
    /// Watches the objects the module at `index` holds now, as it begins to deactivate: its ledger, and every
    /// object of the module's own Swift module reachable from its instance and its built services (three levels of
    /// stored properties deep).
    func watchReleases(of index: Int) {
        let id = graph.nodes[index].id
        var watched: [WatchedObject] = []
        if let ledger = records[index].ledger { watched.append(WatchedObject(type: "ModuleLedger", object: ledger)) }
        if let instance = records[index].instance {
            let home = Self.swiftModule(of: type(of: instance))
            var seen: Set<ObjectIdentifier> = []
            var values: [Any] = [instance]
            values += serviceRuntime.provided[index].compactMap { $0.builtInstance() }
            for value in values { Self.collect(value, from: home, depth: 3, into: &watched, seen: &seen) }
        }
        releaseWatches[id] = watched
    }

    /// What of module `id` is still alive since it last began to deactivate: each type with how many of its
    /// objects, in type order; empty when everything went, `nil` when it never deactivated while watched.
    package func unreleased(_ id: ModuleID) -> [(type: String, count: Int)]? {
        guard let watched = releaseWatches[id] else { return nil }
        let alive = watched.filter { $0.object != nil }
        return Dictionary(grouping: alive, by: \.type).map { ($0.key, $0.value.count) }.sorted { $0.type < $1.type }
    }

    /// What the kernel itself still holds for module `id`, in words; empty when it holds nothing.
    package func holdings(of id: ModuleID) -> [String] {
        var holdings: [String] = []
        if let index = graph.position[id] {
            if let ledger = records[index].ledger {
                holdings.append("its ledger, \(ledger.isOpen ? "open" : "closed"), with \(ledger.holdingCount) grants")
            }
            if records[index].instance != nil { holdings.append("its module instance") }
            for box in serviceRuntime.provided[index] where box.builtInstance() != nil {
                holdings.append("the built instance of \(box.key)")
            }
        }
        let points = contributionHub.points(of: id)
        if !points.isEmpty { holdings.append("contributions to \(points.joined(separator: ", "))") }
        if deeplinkRouter.hasRoutes(of: id) { holdings.append("its link handlers") }
        if eventHub.isPublisher(id) { holdings.append("the right to publish events") }
        return holdings
    }

    /// The Swift module a type is declared in: `GhostApp` for `GhostApp.WeatherModule`.
    private static func swiftModule(of type: any Any.Type) -> Substring {
        _typeName(type, qualified: true).prefix { $0 != "." }
    }

    /// Adds the objects of Swift module `home` in `value` and its stored properties, `depth` levels down.
    private static func collect(
        _ value: Any, from home: Substring, depth: Int, into watched: inout [WatchedObject],
        seen: inout Set<ObjectIdentifier>
    ) {
        let dynamicType = type(of: value)
        if dynamicType is AnyClass {
            let object = value as AnyObject
            guard seen.insert(ObjectIdentifier(object)).inserted else { return }
            if swiftModule(of: dynamicType) == home {
                watched.append(WatchedObject(type: _typeName(dynamicType, qualified: true), object: object))
            }
        }
        guard depth > 0 else { return }
        for child in Mirror(reflecting: value).children {
            collect(child.value, from: home, depth: depth - 1, into: &watched, seen: &seen)
        }
    }
}
