#!/usr/bin/env bash
# Runs the test suite under the thread sanitizer, in its own build folder (.build-tsan), with the suppressions for
# Synchronization.Mutex's false reports (see suppressions.txt and MutexReproducer.swift) and nothing else
# suppressed: any other report fails the run. Extra arguments go to `swift test` (for example --filter Kernel).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
export TSAN_OPTIONS="suppressions=$here/suppressions.txt halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}"
log="$(mktemp)"
status=0
swift test --sanitize=thread --scratch-path .build-tsan "$@" 2>&1 | tee "$log" || status=$?
reports=$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)
echo "thread sanitizer: $reports report(s) beyond the suppressed Mutex frames"
rm -f "$log"
[ "$reports" -eq 0 ] && exit "$status"
exit 1
