internal import Foundation
internal import Logging
internal import Mosaic
internal import Synchronization

/// The entry of an isolated module's process: the host's executable, started again by the host's kernel to run one
/// module. Call ``serveIfAsked(_:)`` first thing in `main`, before parsing arguments:
///
/// ```swift
/// if let status = await IsolatedModuleProcess.serveIfAsked(catalog) { exit(status) }
/// ```
///
/// In a process the kernel did not start for a module, it returns `nil` at once. In one it did, it runs the module
/// named in its environment with a kernel of its own (the module alone, in process) and answers the host's calls
/// until the host closes its standard input, then returns the status to exit with. What the module prints goes to
/// standard error, which the host logs with the module's label; standard output carries the frames.
public enum IsolatedModuleProcess {
    /// Serves the module the host's kernel started this process for, found in `catalog`; `nil` when this process
    /// was not started for one.
    public static func serveIfAsked(_ catalog: ModuleCatalog) async -> Int32? {
        guard let name = ProcessInfo.processInfo.environment[ChildProcess.moduleVariable] else { return nil }
        let logger = Logger(label: name)
        guard let factory = catalog.entries.first(where: { $0.manifest.id.rawValue == name })?.factory else {
            logger.error("this executable has no module \(name) in its catalog; the host's catalog must be the same")
            return 70
        }
        // Frames go out on the original standard output; what the module prints goes to standard error.
        let frames = dup(STDOUT_FILENO)
        guard frames >= 0, dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else {
            logger.error("standard output could not be kept for the host's frames")
            return 71
        }
        let server = ModuleServer(
            factory: factory, output: FileHandle(fileDescriptor: frames, closeOnDealloc: true), logger: logger)
        await server.serve(FileHandle.standardInput)
        return 0
    }
}

/// The child's side: a kernel with the one module, and the host's calls answered in the order they complete.
private actor ModuleServer {
    private let factory: ModuleFactory
    private nonisolated let output: FileHandle
    private let writer: DispatchQueue
    private let logger: Logger
    private var kernel: Kernel?
    /// The module's shared state and events, which its host keeps.
    private nonisolated let sharing: ChildSharing
    /// The configuration keys the module declares, whose values the host sends.
    private let configurationKeys: [AnyConfigurationKey]

    init(factory: ModuleFactory, output: FileHandle, logger: Logger) {
        self.factory = factory
        self.output = output
        self.logger = logger
        var registrar = ModuleRegistrar()
        factory.register(&registrar)
        configurationKeys = registrar.configurationKeys
        let writer = DispatchQueue(label: "mosaic.isolated-module.frames")
        self.writer = writer
        sharing = ChildSharing(interactions: registrar.interactions, logger: logger) { frame in
            guard let bytes = try? FrameReader.bytes(of: frame) else { return }
            writer.async { try? output.write(contentsOf: bytes) }
        }
    }

    /// Answers the calls read from `input` until it closes; each call runs as it arrives, beside the others.
    func serve(_ input: FileHandle) async {
        let (calls, continuation) = AsyncStream.makeStream(of: BoundaryFrame.self)
        let reader = Locked(FrameReader())
        input.readabilityHandler = { [sharing] handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                sharing.hostLeft()
                continuation.finish()
                return
            }
            do {
                for frame in try reader.withLock({ try $0.frames(after: data) }) {
                    // Answers and notices are taken here, in order: a value the host sent before an answer is in
                    // the mirror before the write it answers returns.
                    if case .call = frame { continuation.yield(frame) } else { sharing.take(frame) }
                }
            } catch {
                handle.readabilityHandler = nil
                sharing.hostLeft()
                continuation.finish()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for await frame in calls {
                guard case .call(let number, let call) = frame else { continue }
                group.addTask { await self.answer(number, call) }
            }
        }
        await kernel?.shutdown()
    }

    private func answer(_ number: Int, _ call: BoundaryCall) async {
        let reply: BoundaryReply
        do {
            reply = .done(try await perform(call))
        } catch {
            reply = .failed(String(describing: error))
        }
        guard let bytes = try? FrameReader.bytes(of: .reply(id: number, reply)) else { return }
        writer.async { [output] in try? output.write(contentsOf: bytes) }
    }

    private func perform(_ call: BoundaryCall) async throws -> Data? {
        switch call {
        case .ping: break
        case .activate(let host, let state, let configuration):
            try await activate(host, state: state, configuration: configuration)
        case .deactivate:
            await kernel?.shutdown()
            kernel = nil
        case .content(let point, let id, let call):
            guard let kernel else { throw BoundaryError("the module is not active in its process") }
            return try await kernel.servedContent(point: point, id: id, call: call)
        case .open(let url):
            guard let kernel else { throw BoundaryError("the module is not active in its process") }
            if case .notHandled(let error) = await kernel.open(url) { throw error }
        case .dispatch(let phase, let event):
            guard let kernel else { throw BoundaryError("the module is not active in its process") }
            let report: DispatchReport
            if let phase {
                report = try await kernel.run(LifecyclePhase(phase))
            } else if let event {
                report = try await kernel.send(event.event)
            } else {
                return nil
            }
            // The module's own participant or listener failed: the host reports why, as in process.
            let failures = report.entries.compactMap { entry -> String? in
                switch entry.outcome {
                case .completed: nil
                case .failed(let reason): reason
                case .timedOut: "\(entry.module) did not finish \(report.name) within its process's time limit"
                }
            }
            if !failures.isEmpty { throw BoundaryError(failures.joined(separator: "; ")) }
        case .deliver(let handler, let envelope, let base):
            return try await sharing.deliver(to: handler, envelope, base: base)
        }
        return nil
    }

    /// Boots a kernel with the module alone, every entitlement it names granted (the host decides what shows), its
    /// mirror of shared state holding `state`.
    private func activate(
        _ host: HostPlan, state: [String: Data], configuration: [String: CrossingConfigurationValue]
    ) async throws {
        guard kernel == nil else { throw BoundaryError("the module is active already") }
        var catalog = ModuleCatalog()
        catalog.add(factory)
        var options = KernelOptions(deeplinkRules: DeeplinkRules(allowedSchemes: [DeeplinkRules.anyScheme]))
        options.isolation.insideChild = true
        options.isolation.sharing = sharing
        options.configurationProviders = [
            crossedConfiguration(configuration, of: factory.manifest.id, keys: configurationKeys)
        ]
        let kernel = Kernel(
            catalog: catalog, host: host.environment, entitlements: .granted(catalog.declaredEntitlements),
            extensionPoints: catalog.contributedPoints, options: options, logger: logger)
        sharing.attach(
            mirror: kernel.stateHub, relay: kernel.eventHub, configuration: kernel.configurationHub,
            module: factory.manifest.id, values: state)
        let report = try await kernel.boot()
        let id = factory.manifest.id
        // A module that starts on demand was started by its first use in the host: it starts now.
        let state = try await kernel.start(id)
        guard state.isActive else {
            await kernel.shutdown()
            let problems = report.diagnostics.filter(atLeast: .error).map(\.message)
            throw BoundaryError(
                (problems.isEmpty ? "\(id) is \(state)" : problems.joined(separator: " ")).prefix(1_000).description)
        }
        self.kernel = kernel
    }
}

extension Kernel {
    /// The content of this kernel's contribution `id` to the point `point`, built and encoded as JSON, or its
    /// answer to `call`: what the host of an isolated module asks its process for.
    func servedContent(point: String, id: String, call: Data?) async throws -> Data {
        guard
            let (module, declaration) = graph.nodes.lazy.compactMap({ node in
                node.contributions.first { $0.point.id == point && $0.id == id }.map { (node.id, $0) }
            }).first,
            let crossing = declaration.crossing,
            let bound = contributionHub.contribution(of: module, point: point, id: id)
        else { throw BoundaryError("the module has no contribution '\(id)' to \(point) now") }
        return try await crossing.serve(bound, call)
    }
}
