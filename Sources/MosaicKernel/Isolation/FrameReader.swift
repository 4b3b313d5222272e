internal import Foundation

/// Frames of a byte stream: cut as they arrive, whatever the reads' sizes.
///
/// A frame is 4 bytes of length (big endian), then a byte that says its form, then the message. Most messages are
/// JSON; the two that every request to an isolated route or widget sends, a content call and its reply, are their
/// parts in binary, so that the content they carry (JSON already) is neither escaped nor base64-encoded again. As
/// JSON, those two frames took a fifth of an isolated module's processor time under load.
struct FrameReader {
    /// The largest frame taken; a larger length is a broken peer, not a message.
    static let maximumFrame = 64 << 20

    /// How a frame's message is written, its first byte.
    private enum Form: UInt8 {
        case json = 0
        /// `.call(id, .content(point, id, call))`: the number, the point and contribution identifiers (each 4 bytes
        /// of length, then UTF-8), then the call's bytes if it has one (a byte 1 first; 0 when it has none).
        case contentCall = 1
        /// `.reply(id, .done(value))`: the number, then the value's bytes if it has one (a byte 1 first; 0 if not).
        case done = 2
    }

    private var buffer: [UInt8] = []
    /// Where the first frame not taken yet begins in `buffer`.
    private var next = 0

    /// The whole frames `bytes` completes, in order.
    ///
    /// - Throws: ``BoundaryError`` when a length is beyond ``maximumFrame`` or a frame is not a message.
    mutating func frames(after bytes: Data) throws(BoundaryError) -> [BoundaryFrame] {
        buffer.append(contentsOf: bytes)
        var frames: [BoundaryFrame] = []
        while buffer.count - next >= 4 {
            let length = buffer[next..<next + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= Self.maximumFrame else {
                throw BoundaryError("the other side sent a frame of \(length) bytes, past the limit")
            }
            guard buffer.count - next >= 4 + length else { break }
            var body = FrameBody(buffer[next + 4..<next + 4 + length])
            do {
                frames.append(try Self.message(in: &body))
            } catch {
                throw BoundaryError("the other side sent a frame that is not a message: \(error)")
            }
            next += 4 + length
        }
        // What was taken is dropped once nothing is left after it, or once it outgrows what is left.
        if next == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            next = 0
        } else if next > buffer.count - next {
            buffer.removeFirst(next)
            next = 0
        }
        return frames
    }

    private static func message(in body: inout FrameBody) throws -> BoundaryFrame {
        switch Form(rawValue: try body.byte()) {
        case .json: return try JSONDecoder().decode(BoundaryFrame.self, from: Data(body.rest()))
        case .contentCall:
            let number = try body.number()
            let point = try body.string()
            let id = try body.string()
            return .call(id: number, .content(point: point, id: id, call: try body.optionalRest()))
        case .done: return .reply(id: try body.number(), .done(try body.optionalRest()))
        case nil: throw BoundaryError("its form is unknown")
        }
    }

    /// `frame` as bytes to write.
    static func bytes(of frame: BoundaryFrame) throws -> Data {
        var body: [UInt8]
        switch frame {
        case .call(let number, .content(let point, let id, let call)):
            body = [Form.contentCall.rawValue]
            append(number, to: &body)
            append(point, to: &body)
            append(id, to: &body)
            append(call, to: &body)
        case .reply(let number, .done(let value)):
            body = [Form.done.rawValue]
            append(number, to: &body)
            append(value, to: &body)
        default:
            body = [Form.json.rawValue]
            body.append(contentsOf: try JSONEncoder().encode(frame))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + body.count)
        appendLength(body.count, to: &bytes)
        bytes.append(contentsOf: body)
        return Data(bytes)
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        let length = UInt32(length)
        bytes.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff)])
        bytes.append(UInt8(length & 0xff))
    }

    private static func append(_ number: Int, to bytes: inout [UInt8]) {
        let bits = UInt64(bitPattern: Int64(number))
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(bits >> UInt64(shift) & 0xff)) }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = Array(text.utf8)
        appendLength(utf8.count, to: &bytes)
        bytes.append(contentsOf: utf8)
    }

    private static func append(_ data: Data?, to bytes: inout [UInt8]) {
        guard let data else { return bytes.append(0) }
        bytes.append(1)
        bytes.append(contentsOf: data)
    }
}

/// The message of one frame, read from its start.
private struct FrameBody {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    mutating func byte() throws -> UInt8 {
        guard position < bytes.endIndex else { throw BoundaryError("it ends early") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func number() throws -> Int {
        var bits: UInt64 = 0
        for _ in 0..<8 { bits = bits << 8 | UInt64(try byte()) }
        return Int(Int64(bitPattern: bits))
    }

    mutating func string() throws -> String {
        var length = 0
        for _ in 0..<4 { length = length << 8 | Int(try byte()) }
        guard bytes.endIndex - position >= length else { throw BoundaryError("it ends early") }
        defer { position += length }
        return String(decoding: bytes[position..<position + length], as: UTF8.self)
    }

    /// The bytes left, after a byte 1; `nil` after a byte 0.
    mutating func optionalRest() throws -> Data? {
        switch try byte() {
        case 0: nil
        case 1: Data(rest())
        default: throw BoundaryError("a value's mark is neither 0 nor 1")
        }
    }

    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }
}
