internal import Foundation
internal import Logging
internal import Mosaic
internal import MosaicWeb

extension WebHost {
    /// Logs a server fault with a fresh error id, the module it concerns and the error itself; returns the id, which
    /// is all the client is shown.
    func logFault(_ what: String, module: ModuleID?, _ error: any Error) -> String {
        var generator = SystemRandomNumberGenerator()
        let id = Self.hex((0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) })
        var metadata: Logger.Metadata = ["error.id": "\(id)", "error": "\(String(describing: error))"]
        if let module { metadata["module"] = "\(module.rawValue)" }
        logger.error("\(what)", metadata: metadata)
        return id
    }

    /// A 500 page for a fault that is not the client's: a short message and the error id to look up in the log.
    func faultPage(_ what: String, module: ModuleID?, _ error: any Error) -> Page {
        let id = logFault(what, module: module, error)
        return problemPage(
            status: 500, "Something went wrong",
            "The server could not answer this request (error id \(id); the server's log has the details).")
    }

    /// A JSON 500 for a fault under `/api`, with the error id to look up in the log.
    func faultJSON(_ what: String, module: ModuleID?, _ error: any Error) -> WebResponse {
        let id = logFault(what, module: module, error)
        return .json(
            Self.jsonError("The server could not answer this request (error id \(id); see the server's log)."),
            status: 500)
    }

    static func jsonError(_ message: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = (try? encoder.encode(["error": message])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
