import Foundation
import Hummingbird

// One route answering a fixed page: what Hummingbird costs before any application work. Given a file after the port,
// it serves that file's bytes instead (web.sh passes the page Ghost's /dashboard served, so both answer the same bytes).
let arguments = CommandLine.arguments.dropFirst()
let port = arguments.first.flatMap(Int.init) ?? 8182
let page: String
if let path = arguments.dropFirst().first {
    guard let contents = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path)") }
    page = String(decoding: contents, as: UTF8.self)
} else {
    page = "<!doctype html><html><body><h1>Dashboard</h1></body></html>"
}
let router = Router()
router.get("/dashboard") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: page)))
}
try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port))).runService()
