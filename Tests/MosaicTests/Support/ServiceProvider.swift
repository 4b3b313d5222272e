import Mosaic

/// One active box providing `T`, and a view that sees it.
func provider<T: Sendable>(
    _ type: T.Type, _ make: @escaping @Sendable () -> T
) -> (box: ServiceBox, view: Services) {
    var registrar = ServiceRegistrar()
    registrar.singleton(ServiceKey(T.self)) { make() }
    let box = registrar.provided[0].makeBox("com.test.provider", false)
    box.activate()
    let table = ServiceTable([box])
    return (box, Services(module: "com.test.consumer", visible: table, all: table))
}
