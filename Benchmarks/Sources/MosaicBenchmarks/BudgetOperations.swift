import Hummingbird
import HummingbirdTesting
import Logging
@_spi(Hosting) import Mosaic
import MosaicHummingbird
import MosaicKernel
import MosaicWeb
import Synchronization

/// The operations whose instructions and heap allocations `Benchmarks/budgets.sh` counts and holds to the budgets in
/// `Benchmarks/budgets.txt`. Each sets up once, then repeats its operation `count` times and prints nothing; the script
/// runs two counts and divides the difference, so that starting the process and the setup cancel out.
let budgetOperations: [String: @Sendable (_ count: Int) async throws -> Void] = [
    "resolve": { count in
        let services = try await mosaicServices()
        for _ in 0..<count { consume(try services.resolve(.shared)) }
    },
    "injected": { count in
        let (kernel, module) = try await injectingModule()
        for _ in 0..<count { consume(try module.shared()) }
        await kernel.shutdown()
    },
    "transient": { count in
        let services = try await mosaicServices()
        for _ in 0..<count { consume(try services.resolve(.leafA)) }
    },
    "root-and-3": { count in
        let services = try await mosaicServices()
        for _ in 0..<count { consume(try services.resolve(ServiceKey(Root.self))) }
    },
    // The floors of the two above: the same instances made by hand.
    "transient-direct": { count in for _ in 0..<count { consume(A() as any LeafA) } },
    "root-and-3-direct": { count in for _ in 0..<count { consume(Root(a: A(), b: B(), c: C())) } },
    "link-among-1000": { count in
        let kernel = Kernel(
            catalog: linkHandlerCatalog(), host: HostEnvironment(version: "1.0.0", schemes: ["ghost"]),
            logger: quietLogger())
        try await kernel.boot()
        let link = try Deeplink(parsing: "ghost://home/f57-3/show?id=42")
        for _ in 0..<count {
            guard case .handled = await kernel.open(link) else { fatalError("the benchmark link was not handled") }
        }
        await kernel.shutdown()
    },
    "event-to-1": { count in
        // One task publishes each event and reads it back from its subscription. With a subscriber task of its own,
        // whether that task was already waiting when an event arrived was up to the scheduler, and moved the count
        // by up to 14 % and 1.7 allocations between runs of one binary; here the event always waits in the
        // subscription's buffer.
        let kernel = Kernel(catalog: ModuleCatalog(), host: HostEnvironment(version: "1.0.0"), logger: quietLogger())
        try await kernel.boot()
        var ticks = kernel.events.subscribe(to: Tick.self, buffer: 16).makeAsyncIterator()
        for round in 0..<count {
            try kernel.events.publish(Tick(round: round))
            _ = await ticks.next()
        }
        await kernel.shutdown()
    },
    "durable-to-1": { count in
        // One durable event published and handled at a time, in the kernel's memory store: the dispatcher's own
        // cost per delivery (claim, handler call within its time limit, completion), without a database.
        let arrivals = Arrivals()
        let shop = Mutex<ActivationContext?>(nil)
        var catalog = ModuleCatalog()
        catalog.add(
            ModuleFactory(manifest: Manifest(id: "bench.shop", version: "1.0.0")) {
                BenchModule { context in shop.withLock { $0 = context } }
            })
        catalog.add(
            ModuleFactory(manifest: Manifest(id: "bench.mail", version: "1.0.0")) {
                BenchModule { context in
                    try await context.events.handle(BenchReceipt.self, as: "budget") { arrivals.arrived($0.event) }
                }
            })
        let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quietLogger())
        try await kernel.boot()
        guard let context = shop.withLock({ $0 }) else { throw BenchmarkError("the shop module did not activate") }
        for round in 1...count {
            try await context.events.publish(BenchReceipt(order: round, sentAt: 0))
            await arrivals.wait(for: round)
        }
        await kernel.shutdown()
    },
    "dashboard": { count in try await getRepeatedly(count, bare: false) },
    "bare-route": { count in try await getRepeatedly(count, bare: true) },
    "boot-100": { count in try await profileOnDemandBoot(onDemand: 0, times: count) },
]

/// A logger that prints nothing below critical: the kernel's own cost, not the console's.
func quietLogger() -> Logger {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    return quiet
}

/// A booted kernel whose one module reads a singleton through `@Injected`, and that module.
func injectingModule() async throws -> (Kernel, InjectingModule) {
    var catalog = ModuleCatalog()
    catalog.add(ModuleFactory(InjectingModule.self))
    let kernel = Kernel(catalog: catalog, host: HostEnvironment(version: "1.0.0"), logger: quietLogger())
    try await kernel.boot()
    guard let module = InjectingModule.activated.withLock({ $0 }) else {
        fatalError("the benchmark module did not activate")
    }
    return (kernel, module)
}

/// GETs `/dashboard` of the web host over 20 Ghost-shaped modules and a middleware that marks every response, as
/// Ghost's analytics module does, `count` times, in process (Hummingbird's router test client: the whole responder,
/// no socket); or, with `bare`, a router of one route answering the same bytes, the floor the web host is held to.
func getRepeatedly(_ count: Int, bare: Bool) async throws {
    var catalog = ghostShapedCatalog(count: 20, onDemand: 0)
    catalog.add(
        ModuleFactory(
            manifest: Manifest(id: "bench.app.marker", version: "1.0.0"),
            register: { module in
                module.middleware("marker") { request, next in
                    var response = try await next(request)
                    response.headers["X-Bench-Marker"] = "on"
                    return response
                }
            }
        ) { SampleModule() })
    let kernel = Kernel(
        catalog: catalog, host: HostEnvironment(version: "1.0.0", schemes: ["bench"]),
        extensionPoints: WebHost.extensionPoints, logger: quietLogger())
    try await kernel.boot()
    let web = WebHost(kernel: kernel, catalog: catalog, scheme: "bench", title: "Bench", logger: quietLogger())
    let page = try await Application(router: web.router(servedOn: .loopback)).test(.router) { client in
        try await client.execute(uri: "/dashboard", method: .get) { $0.body }
    }
    let router = Router(context: WebRequestContext.self)
    if bare {
        router.get("/dashboard") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: page))
        }
    }
    let application = bare ? Application(router: router) : Application(router: web.router(servedOn: .loopback))
    try await application.test(.router) { client in
        for _ in 0..<count {
            try await client.execute(uri: "/dashboard", method: .get) { response in
                guard response.status == .ok else { fatalError("/dashboard answered \(response.status)") }
            }
        }
    }
    await kernel.shutdown()
}
