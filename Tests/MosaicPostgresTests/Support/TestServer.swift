import Foundation
import Logging
import Mosaic
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of the tests' own: a new cluster in a temporary directory, on a free loopback port, with
/// trust authentication for the user `mosaic`. PostgreSQL refuses to run as root, so as root the cluster belongs to
/// `nobody`. A suite that uses it carries ``TestServer/scope``: the server starts before the suite's first test and
/// stops after its last. Without PostgreSQL's programs the suite is skipped, saying how to install them; CI sets
/// `MOSAIC_REQUIRE_OUTSIDE_PROGRAMS=1`, which makes that a failure.
final class TestServer: Sendable {
    /// The server of the suite that is running.
    @TaskLocal static var current: TestServer?

    let port: Int
    private let directory: URL
    private let programs: URL
    private let databases = Counter()

    /// The directory that holds `initdb` and `pg_ctl`, or `nil` when PostgreSQL is not installed.
    static let programDirectory: URL? = {
        var candidates = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
        candidates += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
            .map { URL(filePath: $0) }
    }()

    static let required = ProcessInfo.processInfo.environment["MOSAIC_REQUIRE_OUTSIDE_PROGRAMS"] == "1"
    static var shouldRun: Bool { programDirectory != nil || required }
    static let skipReason: Comment =
        "skipped: PostgreSQL's initdb not found; install with `apt-get install postgresql` (.ci/run does)"

    private init(port: Int, directory: URL, programs: URL) {
        self.port = port
        self.directory = directory
        self.programs = programs
    }

    /// Servers start one at a time: a server inherits whatever descriptors the test process has open when it is
    /// spawned, and would keep another suite's port check, and with it that port, if they overlapped.
    private static let starting = Locked(())

    /// Starts a server.
    static func start() throws -> TestServer {
        guard let programs = programDirectory else {
            throw TestServerError("PostgreSQL is required here but initdb was not found; apt-get install postgresql")
        }
        return try starting.withLock { _ in try start(programs) }
    }

    private static func start(_ programs: URL) throws -> TestServer {
        let directory = FileManager.default.temporaryDirectory.appending(path: "mosaic-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let asRoot = getuid() == 0
        if asRoot { try run("/bin/chown", ["nobody", directory.path]) }
        let data = directory.appending(path: "data").path
        let log = directory.appending(path: "server.log")
        try TestServer(port: 0, directory: directory, programs: programs).runPostgres(
            "initdb", ["-D", data, "-U", "mosaic", "-A", "trust", "-E", "UTF8", "--no-sync"])
        // A port found free can still be taken before the server binds it; starting again elsewhere is the remedy.
        var failures: [String] = []
        for _ in 1...3 {
            let server = TestServer(port: try freePort(), directory: directory, programs: programs)
            do {
                try server.runPostgres(
                    "pg_ctl",
                    [
                        "-D", data, "-l", log.path, "-w", "-t", "60", "-o",
                        "-F -p \(server.port) -k \(directory.path) -c listen_addresses=127.0.0.1", "start",
                    ])
                return server
            } catch {
                let serverLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                failures.append("\(error)\nserver log:\n\(serverLog.suffix(2_000))")
                print("PostgreSQL did not start on port \(server.port); trying another. \(failures.last ?? "")")
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw TestServerError(failures.joined(separator: "\n---\n"))
    }

    /// Stops the server and deletes its cluster.
    func stop() {
        try? runPostgres("pg_ctl", ["-D", directory.appending(path: "data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops every process of the server (SIGSTOP), the postmaster first so that no new connection gets past it:
    /// a server that stops answering without closing a connection. Returns what ``resume(_:)`` wakes.
    func pause() throws -> [pid_t] {
        let pidFile = directory.appending(path: "data/postmaster.pid")
        guard let first = try String(contentsOf: pidFile, encoding: .utf8).split(separator: "\n").first,
            let postmaster = pid_t(first)
        else { throw TestServerError("\(pidFile.path) names no process") }
        kill(postmaster, SIGSTOP)
        var stopped = [postmaster]
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (name) state ppid": the parent is the second field after the name.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster {
                kill(pid, SIGSTOP)
                stopped.append(pid)
            }
        }
        return stopped
    }

    /// Lets every process ``pause()`` stopped run again.
    func resume(_ stopped: [pid_t]) {
        for pid in stopped { kill(pid, SIGCONT) }
    }

    /// A new, empty database, and its URL.
    func makeDatabase() async throws -> String {
        let name = "test_\(databases.next())"
        try await execute("CREATE DATABASE \(name)", in: "postgres")
        return url(of: name)
    }

    func url(of database: String) -> String {
        "postgres://mosaic@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// Runs `sql` (one statement) in `database`, as the superuser, on a connection of its own.
    @discardableResult
    func execute(_ sql: String, in database: String) async throws -> [PostgresRow] {
        let connection = try await connect(to: database)
        do {
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test.postgres"))
                .get().rows
            try? await connection.close()
            return rows
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// A connection of its own to `database`, as the superuser, for a test to hold a transaction open on.
    func connect(to database: String) async throws -> PostgresConnection {
        try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: .init(
                host: "127.0.0.1", port: port, username: "mosaic", password: nil, database: database, tls: .disable),
            id: 0, logger: Logger(label: "test.postgres")
        ).get()
    }

    private func runPostgres(_ program: String, _ arguments: [String]) throws {
        let path = programs.appending(path: program).path
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "nobody", "--", path] + arguments)
        } else {
            try Self.run(path, arguments)
        }
    }

    /// Runs `executable` and waits for it. Not with Foundation's `Process`: it notices a child's end by a
    /// descriptor the child inherits, which the server `pg_ctl` starts keeps open, so it would wait forever.
    private static func run(_ executable: String, _ arguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appending(path: "mosaic-pg-run-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestServerError("\(executable) could not be started (errno \(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw TestServerError("\(executable) \(arguments.joined(separator: " ")) failed (\(status)): \(text)")
        }
    }

    /// A port nothing listens on, below the range the system hands out to outgoing connections (a port from that
    /// range can be taken by a test's client connection before the server binds it). The probe's socket is closed
    /// on exec, so no child keeps it.
    private static func freePort() throws -> Int {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let port = Int.random(in: 20_000..<32_768, using: &generator)
            let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard probe >= 0 else { break }
            defer { close(probe) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound == 0 { return port }
        }
        throw TestServerError("no free port between 20000 and 32767 on 127.0.0.1")
    }
}

extension TestServer {
    /// The suite trait that starts a server for the suite's tests and stops it after them.
    struct Scope: SuiteTrait, TestScoping {
        var isRecursive: Bool { false }

        func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            // Starting and stopping a server wait for its programs: off the cooperative pool.
            let server = try await offThePool { try TestServer.start() }
            do {
                try await TestServer.$current.withValue(server) { try await function() }
            } catch {
                _ = try? await offThePool { server.stop() }
                throw error
            }
            try await offThePool { server.stop() }
        }
    }

    static var scope: Scope { Scope() }

    /// The running suite's server; fails the test when there is none.
    static func running() throws -> TestServer {
        try #require(current, "the suite carries no TestServer.scope")
    }
}

struct TestServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Numbers databases within one server.
final class Counter: Sendable {
    private let value = Locked(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
