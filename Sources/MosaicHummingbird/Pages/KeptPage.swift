internal import HTTPTypes
internal import Hummingbird
internal import MosaicWeb
internal import NIOCore
internal import Synchronization

/// A page kept for many requests (a tab's, in the render cache), with what answering it takes made once, when it
/// was rendered: its body's bytes, and its header fields for Hummingbird, the security headers first.
///
/// A request for an unchanged page then copies neither its body nor its fields, and converts no header field from
/// text but those the modules' middleware added or changed.
struct KeptPage: Sendable {
    /// The page as the modules' middleware sees it.
    let response: WebResponse
    /// The body's bytes.
    let bytes: ByteBuffer
    /// The response's header fields: the security headers, `Content-Length`, `Content-Type`, then its own fields
    /// (not one of a security header's name or of an invalid name).
    let fields: HTTPFields
    /// The response's own header fields as text, in a list: a page has one or two, and the list is searched for
    /// each field of an answer, faster than the dictionary.
    private let headers: [(name: String, value: String)]

    /// `response`, with its bytes and fields made now.
    init(_ response: WebResponse) {
        self.response = response
        bytes = ByteBuffer(string: response.body)
        var fields = HTTPFields(WebHost.securityFields)
        fields.reserveCapacity(fields.count + 2 + response.headers.count)
        fields[.contentLength] = String(bytes.readableBytes)
        fields[.contentType] = response.contentType
        for (name, value) in response.headers.prefix(WebHost.responseHeaderLimit) {
            guard let name = Self.moduleFieldName(name) else { continue }
            fields[name] = value
        }
        self.fields = fields
        headers = response.headers.map { ($0.key, $0.value) }
    }

    /// `answer` for Hummingbird from what was made with the page, when it has the page's status, type and body and
    /// at least the page's header fields (the page's with fields added or changed, as a middleware that marks a
    /// response leaves it); `nil` otherwise, and for a page of a status HTTP does not have.
    func answer(_ answer: WebResponse) -> Response? {
        guard answer.status == response.status, (200...599).contains(answer.status),
            answer.contentType == response.contentType, answer.body == response.body,
            answer.headers.count <= WebHost.responseHeaderLimit
        else { return nil }
        var fields = self.fields
        var pageFields = 0
        for (name, value) in answer.headers {
            guard let kept = headers.first(where: { $0.name == name })?.value else {
                if let name = Self.moduleFieldName(name) { fields[name] = value }
                continue
            }
            pageFields += 1
            guard kept != value, let name = Self.moduleFieldName(name) else { continue }
            fields[name] = value
        }
        // A middleware removed one of the page's fields: answered field by field instead.
        guard pageFields == response.headers.count else { return nil }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: bytes))
    }

    /// The field name `name` of a page or middleware stands for; `nil` for an invalid name, and for a security
    /// header's (the host's own value is sent).
    private static func moduleFieldName(_ name: String) -> HTTPField.Name? {
        guard let field = names.name(name), !WebHost.securityFields.contains(where: { $0.name == field }) else {
            return nil
        }
        return field
    }

    /// The names of pages' and middleware's fields, checked once.
    private static let names = FieldNames()
}

/// Header field names made from text before: a field name made from text is checked and lowercased, and pages and
/// middleware name the same few fields on every request. At most ``limit`` are kept, the first ones made.
final class FieldNames: Sendable {
    static let limit = 32
    private let names = Mutex<[HTTPField.Name]>([])

    /// The field name `text` stands for, or `nil` when it is not a valid name.
    func name(_ text: String) -> HTTPField.Name? {
        if let name = names.withLock({ $0.first { $0.rawName == text } }) { return name }
        guard let name = HTTPField.Name(text) else { return nil }
        names.withLock { names in
            if names.count < Self.limit, !names.contains(where: { $0.rawName == text }) { names.append(name) }
        }
        return name
    }
}

/// The kept page a request was answered with, if it was: set while the modules' middleware pass the request on,
/// read when their answer is converted for Hummingbird.
final class AnsweredPage: Sendable {
    private let kept = Mutex<KeptPage?>(nil)

    /// The page, once the request was answered with it.
    var page: KeptPage? { kept.withLock { $0 } }

    /// Notes that the request was answered with `page`.
    func keep(_ page: KeptPage) {
        kept.withLock { $0 = page }
    }
}
