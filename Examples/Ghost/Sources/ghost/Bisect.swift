import ArgumentParser
import Foundation
import Mosaic
import MosaicKernel

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ghost bisect --check COMMAND`: finds the module behind a failing check on a running Ghost, live, through its
/// admin port's control plane (`POST /modules/hold`).
struct Bisect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the module behind a failing check on a running Ghost, holding off halves of its modules live.",
        discussion: """
            COMMAND runs in a shell after each change; exit status 0 means the app behaves, and it must fail with \
            every module active. Ghost keeps running: the modules held off are deactivated and, at the end, every \
            module is brought back as it was. Needs the running Ghost's admin port and operator key.
            """)

    @Option(help: "The running Ghost's admin port URL.")
    var admin = "http://127.0.0.1:8081"

    @Option(name: .customLong("operator-key-file"), help: "The file holding the running Ghost's operator key.")
    var operatorKeyFile: String

    @Option(help: "The shell command that checks the app; exit status 0 means it behaves.")
    var check: String

    func run() async throws {
        let key: String
        do {
            key = try String(contentsOfFile: operatorKeyFile, encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw ValidationError(
                "--operator-key-file \(operatorKeyFile) cannot be read (\(error)); name a readable file.")
        }
        let plane = ControlPlane(admin: admin, key: key)
        let active = try await plane.hold([])
        let found = try await Bisection.search(
            active, holdOff: { _ = try await plane.hold($0) }, check: { [check] in await Self.passes(check) })
        print(found)
        if found.module == nil { throw ExitCode(1) }
    }

    /// Whether `command` exits 0 in a shell.
    static func passes(_ command: String) async -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        return await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus == 0) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(returning: false)
            }
        }
    }
}

/// A running Ghost's control plane, as `bisect` uses it.
private struct ControlPlane: Sendable {
    let admin: String
    let key: String

    /// Holds off `ids` (none: brings every module back); returns the active modules, in dependency order.
    func hold(_ ids: Set<ModuleID>) async throws -> [ModuleID] {
        guard let url = URL(string: admin.trimmingSuffix("/") + "/modules/hold") else {
            throw ValidationError("--admin \(admin) is not a URL; pass one such as http://127.0.0.1:8081.")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        // The host's own origin: what the control plane asks of a change that is not from a browser's form.
        if let scheme = url.scheme, let host = url.host {
            request.setValue("\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")", forHTTPHeaderField: "Origin")
        }
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let modules = ids.map(\.rawValue).sorted().joined(separator: ",")
        request.httpBody = Data(
            "modules=\(modules.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")".utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        let text = String(decoding: data, as: UTF8.self)
        guard (response as? HTTPURLResponse)?.statusCode == 200,
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("active:") })
        else {
            throw ValidationError("\(url) refused to hold modules off: \(text.prefix(500))")
        }
        return line.dropFirst("active:".count).split(separator: " ").map { ModuleID(String($0)) }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
