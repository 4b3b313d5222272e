import FuzzSupport
import Mosaic

/// Any bytes as a semantic version and as a version range (split at the first newline into two versions as
/// well): parsing, ordering, `nextMajor` and containment never trap, and stay consistent.
func fuzzVersion(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = FuzzSupport.text(bytes, count)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let left = SemanticVersion(parts[0])
    let right = SemanticVersion(parts.count > 1 ? parts[1] : text)
    precondition(left.isValid == (left.problem == nil), "validity and problem disagree")
    precondition(!(left < right && right < left), "ordering is not antisymmetric: \(left), \(right)")
    precondition((left == right) == (!(left < right) && !(right < left)), "equality and ordering disagree")
    precondition((left == right) ? left.hashValue == right.hashValue : true, "equal versions hash apart")
    if let next = left.nextMajor { precondition(left < next, "\(next) is not above \(left)") }
    for candidate in [text, parts[0]] {
        guard let range = VersionRange(parsing: candidate) else { continue }
        _ = range.description
        _ = range.problem
        if range.problem != nil { precondition(!range.contains(left) || !left.isValid, "a broken range accepts") }
        _ = range.contains(right)
    }
    return 0
}

runFuzzer { fuzzVersion($0, $1) }
