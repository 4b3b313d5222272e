internal import Foundation
internal import Logging
internal import Mosaic
internal import MosaicKernel
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
    /// A 503 when the fault is the app's storage not answering in time, or a module deactivating (a middleware
    /// that guards the page cannot run, so the page is not served without it): the request may succeed if tried
    /// again.
    func faultPage(_ what: String, module: ModuleID?, _ error: any Error) -> Page {
        if let unavailable = Self.unavailableModule(error) {
            if unavailable.code == .processEnded { _ = logFault(what, module: unavailable.module, error) }
            return problemPage(
                status: 503, "Try again shortly",
                "\(Self.unavailability(unavailable)), and this page needs it. Try again in a few seconds.")
        }
        let id = logFault(what, module: module, error)
        if Self.isStorageOutage(error) {
            return problemPage(
                status: 503, "Try again shortly",
                "The app's storage did not answer in time, so this change may not have been made (error id \(id)). "
                    + "Try again in a few seconds.")
        }
        return problemPage(
            status: 500, "Something went wrong",
            "The server could not answer this request (error id \(id); the server's log has the details).")
    }

    /// A JSON 500 for a fault under `/api`, with the error id to look up in the log; a 503 with `Retry-After` when
    /// the app's storage did not answer in time.
    func faultJSON(_ what: String, module: ModuleID?, _ error: any Error) -> WebResponse {
        if let unavailable = Self.unavailableModule(error) {
            if unavailable.code == .processEnded { _ = logFault(what, module: unavailable.module, error) }
            var response = WebResponse.json(
                Self.jsonError("\(Self.unavailability(unavailable)); try again shortly."), status: 503)
            response.headers["Retry-After"] = Self.retryAfter
            return response
        }
        let id = logFault(what, module: module, error)
        if Self.isStorageOutage(error) {
            var response = WebResponse.json(
                Self.jsonError("The app's storage did not answer in time (error id \(id)); try again shortly."),
                status: 503)
            response.headers["Retry-After"] = Self.retryAfter
            return response
        }
        return .json(
            Self.jsonError("The server could not answer this request (error id \(id); see the server's log)."),
            status: 500)
    }

    /// What a 503 tells a client to wait, in seconds, before trying again.
    static let retryAfter = "5"

    /// Whether `error` is the app's storage not answering in time (a write, a transaction or a durable publish
    /// given up on at its deadline, a grant the external storage could not record), which a retry may get past: by its
    /// code, never its text.
    static func isStorageOutage(_ error: any Error) -> Bool {
        switch error {
        case let error as StateError: error.code == .unavailable
        case let error as EventError: error.code == .unavailable
        case let error as DeeplinkError: error.code == .storageUnavailable
        case let error as KernelError: error.code == .storageUnavailable
        case let fault as ModuleFault: isStorageOutage(fault.error)
        default: false
        }
    }

    /// Why a module refused a call, when `error` says it is unavailable (on its way out, not started, or its process
    /// ended while it answered); `nil` for any other error.
    static func unavailableModule(_ error: any Error) -> ModuleUnavailableError? {
        switch error {
        case let error as ModuleUnavailableError: error
        case let fault as ModuleFault: unavailableModule(fault.error)
        default: nil
        }
    }

    /// What a client is told of an unavailable module: never the crash's details, which the log has.
    static func unavailability(_ error: ModuleUnavailableError) -> String {
        switch error.code {
        case .deactivating: "\(error.module) is deactivating"
        case .processEnded: "\(error.module) stopped (its process ended) and is restarting"
        case .notStarted: "\(error.module) could not be started"
        }
    }

    static func jsonError(_ message: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = (try? encoder.encode(["error": message])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
