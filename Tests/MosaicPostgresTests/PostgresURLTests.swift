import Foundation
import Mosaic
import MosaicKernel
import PostgresNIO
import Testing

@testable import MosaicPostgres

struct PostgresURLTests {
    @Test func aServerThatCannotServeIsToldFromAStatementThatFailed() {
        // A standby, a shutdown or start, a server out of connections, memory or disk: not this statement's fault.
        for state in ["25006", "57P01", "57P02", "57P03", "53300", "53100", "53200", "58030"] {
            #expect(PostgresConnections.cannotServe(state) != nil, "\(state)")
        }
        // A lock waited for too long, a cancelled statement, a constraint, a serialization failure, a protocol error.
        for state in ["55P03", "57014", "23505", "40001", "08P01", "42P01", ""] {
            #expect(PostgresConnections.cannotServe(state) == nil, "\(state)")
        }
        #expect(PostgresConnections.cannotServe("25006")?.contains("primary") == true)
    }

    @Test(arguments: [
        ("mysql://u@h/db", "does not start with postgres://"),
        ("postgres:///db", "names no host"),
        ("postgres://h/db", "names no user"),
        ("postgres://u@h/db/extra", "is not one database name"),
        ("postgres://u@h/db?sslmode=sometimes", "sslmode “sometimes”"),
        ("postgres://u@h/db?connect_timeout=3", "“connect_timeout”"),
    ])
    func malformedURLsAreRefusedWithTheFix(url: String, message: String) {
        #expect {
            _ = try PostgresURL(url)
        } throws: { error in
            (error as? PostgresBackendError)?.code == .invalidConfiguration && "\(error)".contains(message)
        }
    }

    @Test func aURLNeverShowsItsPassword() throws {
        let url = try PostgresURL("postgresql://ghost:s%40cret@db.internal:6543/?sslmode=disable")
        #expect(url.description == "postgres://ghost@db.internal:6543/ghost")
        #expect(url.configuration.password == "s@cret")
        #expect(url.configuration.database == "ghost")
    }
}
