internal import Glibc
internal import LibFuzzer

/// One fuzz input: the bytes libFuzzer made.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Hands the process to libFuzzer with `target`; returns only through `exit`.
public func runFuzzer(_ target: FuzzTarget) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}

/// The input's bytes as text, invalid UTF-8 repaired as any reader of outside text would.
public func text(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> String {
    guard let bytes else { return "" }
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}
