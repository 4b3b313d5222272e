/// Takes a value and does nothing with it, from another module and unoptimized, so the optimizer must produce the
/// value and cannot delete the work that made it.
@inline(never) @_optimize(none)
public func blackHole<T>(_ value: T) {}
