internal import Foundation
internal import NIOSSL
public import PostgresNIO

/// A `postgres://` URL as the host gets it (`--database-url`, `DATABASE_URL`), read into a connection
/// configuration. Everything it cannot honour is an error that names the fix; nothing is silently ignored.
///
/// `postgres://user:password@host:port/database?sslmode=prefer`: the user is required, the password (percent-encoded)
/// optional, the port defaults to 5432 and the database to the user's name. `sslmode` is `disable`, `prefer` (the
/// default, as libpq's: TLS when the server offers it), `require` (TLS, the certificate not checked, as libpq's), or
/// `verify-full` (TLS with the certificate checked against the system's roots and the host name).
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// The configuration to connect with.
    public let configuration: PostgresConnection.Configuration
    /// The same, for a pool of connections.
    let poolConfiguration: PostgresClient.Configuration
    /// Where it points, without the password: `postgres://user@host:port/database`.
    public let description: String

    /// Reads `text`.
    /// - Throws: ``PostgresBackendError`` naming what is wrong and how to write it.
    public init(_ text: String) throws {
        let example = "Write it as postgres://user:password@host:5432/database."
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme)
        else {
            throw PostgresBackendError(
                .invalidConfiguration, "The database URL does not start with postgres://. \(example)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresBackendError(.invalidConfiguration, "The database URL names no host. \(example)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresBackendError(.invalidConfiguration, "The database URL names no user. \(example)")
        }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else {
            throw PostgresBackendError(
                .invalidConfiguration, "The database URL's port \(port) is not between 1 and 65535. \(example)")
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else {
            throw PostgresBackendError(
                .invalidConfiguration, "The database URL's path “\(path)” is not one database name. \(example)")
        }
        let database = path.isEmpty ? user : path
        var mode = "prefer"
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw PostgresBackendError(
                    .invalidConfiguration,
                    "The database URL has the parameter “\(item.name)”, which Mosaic does not read; the one it reads "
                        + "is sslmode. Remove it.")
            }
            mode = item.value ?? ""
        }
        let tls: PostgresConnection.Configuration.TLS
        let poolTLS: PostgresClient.Configuration.TLS
        do {
            switch mode {
            case "disable":
                tls = .disable
                poolTLS = .disable
            case "prefer", "require":
                var unchecked = TLSConfiguration.makeClientConfiguration()
                unchecked.certificateVerification = .none
                let context = try NIOSSLContext(configuration: unchecked)
                tls = mode == "prefer" ? .prefer(context) : .require(context)
                poolTLS = mode == "prefer" ? .prefer(unchecked) : .require(unchecked)
            case "verify-full":
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                poolTLS = .require(.makeClientConfiguration())
            default:
                throw PostgresBackendError(
                    .invalidConfiguration,
                    "The database URL's sslmode “\(mode)” is not one Mosaic knows; use disable, prefer, require or "
                        + "verify-full.")
            }
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw PostgresBackendError(
                .invalidConfiguration, "TLS for the database could not be set up: \(error). Try sslmode=disable.")
        }
        configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: components.password, database: database, tls: tls)
        poolConfiguration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: components.password, database: database, tls: poolTLS)
        description = "postgres://\(user)@\(host):\(port)/\(database)"
    }
}

/// Why the PostgreSQL backend could not do what was asked; the message says what to do.
public struct PostgresBackendError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure: the one thing to decide on (fix the configuration, retry later), never the message's
    /// text.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The URL or an option is malformed; nothing was tried. Fix it.
        case invalidConfiguration = "invalid-configuration"
        /// The server could not be reached, refused the login, or answered that it cannot serve now (a server
        /// shutting down or out of connections: retry later; a standby, which takes no writes: point the URL at the
        /// primary). The message says which.
        case unreachable
        /// The server did not answer in time; the connection was closed. Retry later.
        case timedOut = "timed-out"
        /// The server answered with an error about the statement (a lock it waited for too long, a constraint).
        case failed
        /// Mosaic's tables could not be created or updated, or are newer than this Mosaic knows.
        case schema
    }

    /// The kind of failure.
    public let code: Code
    /// What happened and what to do.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
