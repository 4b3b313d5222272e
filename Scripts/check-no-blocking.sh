#!/usr/bin/env bash
# Nothing in Sources/ blocks a thread waiting for I/O or another thread: no `EventLoopFuture.wait()`, semaphore,
# condition, sleep or blocking process wait. A thread of the cooperative pool that blocks (two of them on a 2-core
# machine) freezes every task of the process. Locks are `Locked` (Sources/Mosaic/Concurrency), whose `withLock` takes a
# synchronous closure, so no lock can be held across an `await`; its thread-sanitizer form, the one file allowed a
# pthread mutex, is the same. Blocking file and SQLite calls run on dispatch queues of their own (StateFiles,
# StateDatabase), never on the pool.
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='\.wait\(\)|DispatchSemaphore|NSCondition|NSLock|pthread_mutex|Thread\.sleep|usleep\(|sleep\([0-9]|waitUntilExit|readDataToEndOfFile|syncShutdownGracefully|\.sync[[:space:]]*\{'
if grep -rnE "$pattern" Sources --include='*.swift' | grep -v '^Sources/Mosaic/Concurrency/Locked.swift:'; then
    echo "error: a call above blocks a thread; await instead (see Scripts/check-no-blocking.sh)." >&2
    exit 1
fi
