import Hummingbird

// One route answering a fixed page: what Hummingbird costs before any application work.
let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8182
let page = "<!doctype html><html><body><h1>Dashboard</h1></body></html>"
let router = Router()
router.get("/dashboard") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: page)))
}
try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port))).runService()
