#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and the address sanitizer, then runs each for SECONDS (default 60),
# starting from the committed seeds in Corpus/<target>/ and keeping what it finds in .build/corpus/<target>/.
# A crash stops that target, leaves its input in .build/crashes/, and makes the script exit non-zero; turn each
# into a unit test. Usage: Fuzz/run.sh [SECONDS] [deeplink|manifest|version|query|html ...]; FUZZ_SKIP_BUILD=1
# runs what is already built.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(deeplink manifest version query html)

[ -n "${FUZZ_SKIP_BUILD:-}" ] || swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld

# A finding is libFuzzer's report; Swift's own backtracer would only repeat it (and trips the address sanitizer).
export SWIFT_BACKTRACE=enable=no
failed=0
printf '%-10s %10s %8s %8s %8s %s\n' target executions exec/s seconds corpus result
for target in "${targets[@]}"; do
    binary=".build/release/Fuzz${target^}"
    [ "$target" = html ] && binary=".build/release/FuzzHTML"
    corpus=".build/corpus/$target"
    mkdir -p "$corpus" .build/crashes
    log=".build/fuzz-$target.log"
    result=clean
    start=$SECONDS
    "$binary" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix=".build/crashes/$target-" \
        -timeout=10 -rss_limit_mb=4096 "$corpus" "Corpus/$target" >"$log" 2>&1 || { result="CRASH (see $log)"; failed=1; }
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    printf '%-10s %10s %8s %8s %8s %s\n' "$target" "${runs:-?}" "${rate:-?}" "$((SECONDS - start))" \
        "$(ls "$corpus" | wc -l)" "$result"
done
exit $failed
