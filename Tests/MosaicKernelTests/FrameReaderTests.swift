import Foundation
import Testing

@testable import MosaicKernel

/// The frames between a host and an isolated module's process: every form reads back as written, however the
/// bytes are cut, and a broken peer's bytes are refused, never trusted.
@Suite struct FrameReaderTests {
    static let messages: [BoundaryFrame] = [
        .call(id: 1, .content(point: "mosaic.web.routes", id: "GET /art/today", call: Data(#"{"path":"/"}"#.utf8))),
        .call(id: 2, .content(point: "mosaic.dashboard-widgets", id: "art.daily", call: nil)),
        .call(id: Int.max, .content(point: "", id: "ünïcode ✓", call: Data())),
        .reply(id: 3, .done(Data(#"{"title":"Girl with a Pearl Earring"}"#.utf8))),
        .reply(id: 4, .done(nil)),
        .reply(id: 5, .failed("it threw")),
        .call(id: 6, .ping),
        .call(id: 7, .open(url: "ghost://art")),
    ]

    @Test("every message reads back as it was written, whole or a byte at a time")
    func roundTrip() throws {
        let bytes = try Self.messages.reduce(into: Data()) { $0 += try FrameReader.bytes(of: $1) }
        var whole = FrameReader()
        #expect(try whole.frames(after: bytes).map(describe) == Self.messages.map(describe))
        var trickle = FrameReader()
        var read: [BoundaryFrame] = []
        for byte in bytes { read += try trickle.frames(after: Data([byte])) }
        #expect(read.map(describe) == Self.messages.map(describe))
    }

    @Test("a length past the limit, an unknown form and a frame that ends early are refused")
    func brokenPeers() throws {
        var reader = FrameReader()
        #expect(throws: BoundaryError.self) { try reader.frames(after: Data([0x7f, 0xff, 0xff, 0xff])) }
        var unknown = FrameReader()
        #expect(throws: BoundaryError.self) { try unknown.frames(after: Data([0, 0, 0, 1, 9])) }
        // A content call whose point is said to be 200 bytes long, in a frame of 14.
        var early = FrameReader()
        let short: [UInt8] = [0, 0, 0, 14, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 200, 65]
        #expect(throws: BoundaryError.self) { try early.frames(after: Data(short)) }
    }

    private func describe(_ frame: BoundaryFrame) -> String { String(reflecting: frame) }
}
