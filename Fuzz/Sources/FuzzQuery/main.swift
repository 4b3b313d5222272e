import FuzzSupport
@_spi(Hosting) import Mosaic

/// Any bytes as a request query or form body: parsed into items, or refused with a message and a fix.
func fuzzQuery(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = FuzzSupport.text(bytes, count)
    do {
        let items = try QueryItem.items(parsing: text)
        precondition(items.count <= text.utf8.count + 1, "more items than the text has separators")
    } catch {
        precondition(!error.message.isEmpty && !error.fix.isEmpty, "a refusal without a message or fix")
    }
    return 0
}

runFuzzer { fuzzQuery($0, $1) }
