#!/usr/bin/env bash
# Runs the test suite under the thread sanitizer, in its own build folder (.build-tsan): any report fails the run. One
# is suppressed, in suppressions.txt, which says why it is no race (swift-nio's reuse of its own receive buffers). MOSAIC_TSAN swaps the lock every shared state is kept under (`Locked`, in
# Sources/Mosaic/Concurrency) for a pthread mutex the sanitizer sees; Synchronization.Mutex locks with futex calls it
# does not, so every access inside a `withLock` body looked like a race. Extra arguments go to `swift test` (for
# example --filter Kernel).
set -euo pipefail
cd "$(dirname "$0")/../.."
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 suppressions=$PWD/Scripts/thread-sanitizer/suppressions.txt ${TSAN_OPTIONS:-}"
log="$(mktemp)"
status=0
swift test --sanitize=thread --scratch-path .build-tsan -Xswiftc -DMOSAIC_TSAN "$@" 2>&1 | tee "$log" || status=$?
reports=$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)
echo "thread sanitizer: $reports report(s)"
rm -f "$log"
[ "$reports" -eq 0 ] && exit "$status"
exit 1
