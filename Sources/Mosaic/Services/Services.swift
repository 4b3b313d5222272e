/// What one module may resolve: its own services, those it declared it uses, and the host's.
///
/// ```swift
/// let weather = try context.services.resolve(.weatherService)
/// ```
/// Resolving reads a table frozen at boot: no lock, no string hashing, no dynamic cast. A service the module did
/// not declare fails with ``ServiceError/Code-swift.struct/notDeclared``, so every dependency is visible in the
/// manifest-time registration, and validated before anything runs.
public struct Services: Sendable {
    /// The view's parts, in one object: a view is copied into every closure that serves its module (its context,
    /// event bus, jobs and calls), and a copy is then one reference instead of five.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let visible: ServiceTable
        @usableFromInline let all: ServiceTable
        let module: ModuleID
        /// Whether every resolve is reported to the observer of `all` (off unless the host opted in).
        @usableFromInline let countsResolves: Bool

        init(module: ModuleID, visible: ServiceTable, all: ServiceTable) {
            self.module = module
            self.visible = visible
            self.all = all
            self.countsResolves = all.observer?.countsResolves ?? false
        }
    }

    @usableFromInline let storage: Storage
    @inlinable var visible: ServiceTable { storage.visible }
    @inlinable var all: ServiceTable { storage.all }
    @inlinable var countsResolves: Bool { storage.countsResolves }

    /// The module this view belongs to.
    public var module: ModuleID { storage.module }

    /// A view for `module` over `visible`, whose factories resolve their dependencies from `all`.
    package init(module: ModuleID, visible: ServiceTable, all: ServiceTable) {
        storage = Storage(module: module, visible: visible, all: all)
    }

    /// The service `key` names.
    ///
    /// The instance is returned owned: the caller pays a retain and a release of it, as code that keeps a global
    /// singleton does, and threads resolving one singleton contend on its reference count. In hot paths, read the
    /// service with `withService(_:_:)`, which lends it instead.
    @inlinable
    public func resolve<T: Sendable>(_ key: ServiceKey<T>) throws(ServiceError) -> T {
        try resolve(T.self)
    }

    /// The service of type `type`: the kernel's and harness's form of ``resolve(_:)-(ServiceKey<T>)``.
    ///
    /// The common case, a built instance read with no resolve counting and no override scope open, is inlined
    /// into the caller: no call, and no generic code that looks up `T` at run time.
    @inlinable @inline(__always)
    package func resolve<T: Sendable>(_ type: T.Type) throws(ServiceError) -> T {
        guard !countsResolves, !OverrideScope.areActive, let box = visible.box(for: ObjectIdentifier(type)) else {
            return try resolveAnyCase(type)
        }
        return try ServiceTable.builtValue(in: box, as: type) { () throws(ServiceError) -> T in
            try resolveNotBuilt(box, as: type)
        }
    }

    /// ``resolve(_:)-(T.Type)`` of a service in `box` with no instance to read: a transient, a singleton's first use,
    /// or a provider that is not active. Out of line, as the rare path of a singleton; the box found is used again.
    @inlinable @inline(never)
    func resolveNotBuilt<T: Sendable>(_ box: Unmanaged<ServiceBox>, as type: T.Type) throws(ServiceError) -> T {
        try ServiceTable.get(box, from: all, as: type)
    }

    /// ``resolve(_:)-(T.Type)`` in every case: counted, overridden, not built yet, or failing.
    @inlinable @inline(never)
    func resolveAnyCase<T: Sendable>(_ type: T.Type) throws(ServiceError) -> T {
        if countsResolves { countResolve() }
        if OverrideScope.areActive, let value = OverrideScope.current?.value(of: type) { return value }
        guard let box = visible.box(for: ObjectIdentifier(type)) else { throw undeclared(type) }
        return try all.resolve(box, as: type)
    }

    /// Waits without holding a thread until the service of type `type` is built, if this module sees one that is
    /// not: one caller builds it, the others wait for that build (see ``ServiceBox/awaitBuild(_:)``). The kernel
    /// calls it for each service a module's closure takes before it runs the closure, whose resolves then read
    /// built instances; it throws what the factory threw when it was the one that built it.
    package func awaitBuild(of type: any Any.Type) async throws(ServiceError) {
        if OverrideScope.areActive, OverrideScope.current != nil { return }
        guard let box = visible.box(for: ObjectIdentifier(type)) else { return }
        // The common case, built (or transient), reads the box without retaining it.
        let ready = box._withUnsafeGuaranteedRef { box -> Bool in
            if box.isTransient { return true }
            defer { box.endRead() }
            return box.beginRead() != 0
        }
        if ready { return }
        try await box.takeUnretainedValue().awaitBuild(all)
    }

    /// Runs `body` with the service, borrowed rather than returned: a built singleton is then read without touching
    /// its reference count. This is the form for hot paths; if `body` keeps the instance, that copy pays the retain
    /// `resolve(_:)` would have.
    @inlinable
    public func withService<T: Sendable, R>(_ key: ServiceKey<T>, _ body: (T) -> R) throws(ServiceError) -> R {
        let type = T.self
        if countsResolves { countResolve() }
        if OverrideScope.areActive, let value = OverrideScope.current?.value(of: type) { return body(value) }
        guard let box = visible.box(for: ObjectIdentifier(type)) else { throw undeclared(type) }
        let address = box._withUnsafeGuaranteedRef { $0.beginRead() }
        if address != 0 {
            defer { box._withUnsafeGuaranteedRef { $0.endRead() } }
            return ServiceBox.withInstance(at: address, as: type, body)
        }
        box._withUnsafeGuaranteedRef { $0.endRead() }
        return body(try all.resolve(box, as: type))
    }

    /// Reports one resolve to the observer (only when the host opted in to counting them).
    @usableFromInline @inline(never)
    func countResolve() {
        all.observer?.resolved(by: module)
    }

    @usableFromInline
    func undeclared(_ type: any Any.Type) -> ServiceError {
        let name = qualifiedTypeName(type)
        guard all.box(for: ObjectIdentifier(type)) != nil else {
            return all.failed(
                ServiceError(
                    .noProvider, service: name,
                    message: "nothing provides \(name); register a provider for it, or remove the use from \(module)."),
                by: module)
        }
        return all.failed(
            ServiceError(
                .notDeclared, service: name,
                message: "\(module) resolved \(name) without declaring it; add `module.services.use(…)` with the key "
                    + "of \(name) to \(module)'s registration, or read it through an `@Injected` property of the module."
            ),
            by: module)
    }
}
