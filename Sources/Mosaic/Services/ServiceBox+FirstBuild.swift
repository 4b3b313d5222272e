internal import CMosaicReaders
internal import Synchronization

/// A service's first build: one caller builds, outside the box's lock, and the others wait for its end (a synchronous
/// resolve on its thread, ``ServiceBox/awaitBuild(_:)`` suspended), then read what it kept.
extension ServiceBox {
    /// Builds the instance once, outside the lock, and keeps it; inside `withOverrides` it is built fresh and not
    /// kept, so a test's mocks never leak into the kernel's singletons.
    ///
    /// - One caller builds: it claims the build under the lock, runs the factory without it, and publishes the
    ///   instance. A caller that finds another's build under way waits for its end, then reads the instance (or,
    ///   when that build threw, claims the next one: a factory that throws is tried again by the next resolve).
    /// - This caller is synchronous, so it waits holding its thread: a synchronous API cannot suspend. The paths the
    ///   kernel runs a module's closure on wait first, without a thread, in ``awaitBuild(_:)``.
    /// - A factory that resolves this service again, itself or through another factory, fails with
    ///   ``ServiceError/Code-swift.struct/cycle`` rather than waiting for its own build.
    @usableFromInline
    func publish<T>(_ table: ServiceTable, as _: T.Type) throws(ServiceError) -> T {
        if OverrideScope.areActive, OverrideScope.current != nil { return try build(table, as: T.self) }
        let underway = ServiceBuilds.underway
        guard !underway.contains(ObjectIdentifier(self)) else { throw cycle() }
        while true {
            switch claimAndBuild(table, as: T.self, underway: underway) {
            case .built(let value): return value
            case .inactive: throw inactive()
            case .failed(let error): throw error
            case .underway(let other):
                // Held by its builder from before the build was visible until after it ended.
                other.gate.withLock { _ in }
            }
        }
    }

    /// Waits without holding a thread until the service is built, building it here when no other caller is: the
    /// kernel calls it before it runs a module's closure that takes the service, whose synchronous resolve then
    /// reads the instance.
    ///
    /// - Returns at once when the service is transient, built, not active, or already being built by this task
    ///   (the resolve then reports the cycle).
    /// - Throws what the factory threw when this call built it and it failed; a build of another caller that fails
    ///   ends this wait, and the next attempt is this call's or another waiter's.
    package func awaitBuild(_ table: ServiceTable) async throws(ServiceError) {
        guard !isTransient else { return }
        let underway = ServiceBuilds.underway
        guard !underway.contains(ObjectIdentifier(self)) else { return }
        func attempt<T>(as _: T.Type) -> ServiceBuildStep<Void> {
            switch claimAndBuild(table, as: T.self, underway: underway) {
            case .built: .built(())
            case .inactive: .inactive
            case .failed(let error): .failed(error)
            case .underway(let other): .underway(other)
            }
        }
        while true {
            let address = beginRead()
            endRead()
            if address != 0 { return }
            switch _openExistential(type, do: attempt) {
            case .built, .inactive: return
            case .failed(let error): throw error
            case .underway:
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let waits = storage.withLock { slot -> Bool in
                        guard slot.build != nil else { return false }
                        slot.waiters.append(waiter)
                        return true
                    }
                    if waits { table.observer?.awaitingBuild(key, provider: provider) } else { waiter.resume() }
                }
            }
        }
    }

    /// One attempt at the first build: the built instance (this call's or one already kept), or the build under
    /// way that the caller must wait for, or why there is none.
    func claimAndBuild<T>(_ table: ServiceTable, as _: T.Type, underway: [ObjectIdentifier]) -> ServiceBuildStep<T> {
        let build = ServiceBuild()
        // This build's gate is taken before the build is visible, so whoever sees it under way and then takes the
        // gate waits until it has ended.
        return build.gate.withLock { _ -> ServiceBuildStep<T> in
            let (claim, generation) = storage.withLock { slot -> (ServiceBuildStep<T>?, UInt) in
                if slot.address != 0 { return (.built(Self.instance(at: slot.address, as: T.self)), 0) }
                guard active.load(ordering: .sequentiallyConsistent) else { return (.inactive, 0) }
                if let other = slot.build { return (.underway(other), 0) }
                slot.build = build
                return (nil, slot.generation)
            }
            if let claim { return claim }
            let memory = UnsafeMutablePointer<T>.allocate(capacity: 1)
            let result: ServiceBuildStep<T>
            do throws(ServiceError) {
                memory.initialize(
                    to: try ServiceBuilds.building(underway + [ObjectIdentifier(self)]) { () throws(ServiceError) in
                        try self.build(table, as: T.self)
                    })
                result = .built(memory.pointee)
            } catch {
                memory.deallocate()
                result = .failed(error)
            }
            let (kept, waiters) = storage.withLock { slot -> (Bool, [CheckedContinuation<Void, Never>]) in
                slot.build = nil
                let waiters = slot.waiters
                slot.waiters = []
                guard case .built = result else { return (false, waiters) }
                // Released meanwhile (deactivated or reset): this caller gets the instance, nobody keeps it.
                guard slot.generation == generation, active.load(ordering: .sequentiallyConsistent) else {
                    return (false, waiters)
                }
                slot.address = UInt(bitPattern: memory)
                published.store(slot.address, ordering: .sequentiallyConsistent)
                return (true, waiters)
            }
            if case .built = result, !kept {
                memory.deinitialize(count: 1)
                memory.deallocate()
            }
            for waiter in waiters { waiter.resume() }
            return result
        }
    }
}

/// The boxes whose instances the current task is building, innermost last: how a factory that resolves its own
/// service is told apart from another task waiting for the same build.
enum ServiceBuilds {
    @TaskLocal static var underway: [ObjectIdentifier] = []

    /// `build`'s result, with `underway` as the builds under way meanwhile.
    static func building<T>(
        _ underway: [ObjectIdentifier], _ build: () throws(ServiceError) -> T
    ) throws(ServiceError) -> T {
        do {
            return try $underway.withValue(underway) { try build() }
        } catch let error as ServiceError {
            throw error
        } catch {
            // `build` throws only service errors; `withValue` rethrows them untyped.
            throw ServiceError(.factoryFailed, service: "\(T.self)", message: "\(error)", underlying: error)
        }
    }
}

/// A box's state under its lock: the instance it keeps, and its first build.
struct ServiceSlot {
    /// The address of the built instance, or 0.
    var address: UInt = 0
    /// The build under way, if any: only its builder runs the factory.
    var build: ServiceBuild?
    /// Callers of ``ServiceBox/awaitBuild(_:)`` waiting for `build` to end.
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// Counts releases: a build that sees it change while it runs keeps nothing.
    var generation: UInt = 0
}

/// A first build under way: its builder holds `gate` from before the build is visible in the box until after it
/// ended, so a synchronous caller waits for it by taking the gate.
final class ServiceBuild: Sendable {
    let gate = Locked<Void>(())
}

/// What an attempt at a box's first build came to.
enum ServiceBuildStep<T> {
    /// The instance, built by this attempt or earlier.
    case built(T)
    /// The service's module is not active.
    case inactive
    /// This attempt's factory threw.
    case failed(ServiceError)
    /// Another caller's build is under way.
    case underway(ServiceBuild)
}
