#!/usr/bin/env bash
# Instruction counts, as Benchmarks/README.md reports them:
#   Benchmarks/callgrind.sh events|state   instructions per delivery of the fan-out benchmarks: `profile-events` /
#                                           `profile-state` at 40 and 240 rounds, the difference divided by the
#                                           200,000 deliveries between them;
#   Benchmarks/callgrind.sh many           instructions per service of `profile-many` (Mosaic registering,
#                                           resolving and tearing down 1,000 services per round) the same way,
#                                           and of `cold mosaic` / `cold dictionary`, each a whole new process;
#   Benchmarks/callgrind.sh on-demand      instructions per boot of 100 Ghost-shaped modules, 90 on demand against
#                                           all at boot (`profile-on-demand`, 10 and 30 boots, the difference / 20);
#   Benchmarks/callgrind.sh boot           instructions of `profile-boot` (10 boots of 10,000 modules, and making
#                                           their catalog once), the whole process.
# Needs valgrind; builds the benchmarks in release first.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-events}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swift build -c release --package-path Benchmarks --product MosaicBenchmarks
source Benchmarks/valgrind-shim.sh

if [ "$mode" = boot ]; then
    LD_PRELOAD="$work/shim.so" valgrind --tool=callgrind --callgrind-out-file="$work/boot.out" \
        "$work/bench" profile-boot > /dev/null 2> "$work/boot.log"
    sed -n 's/.*refs: *\([0-9,]*\).*/instructions for 10 boots of 10,000 modules: \1/p' "$work/boot.log"
    exit 0
fi
if [ "$mode" = on-demand ]; then
    # Per boot: the difference of 10 and 30 boots in one process, divided by 20, so that starting the process and
    # making the catalog cancel out.
    declare -A counts
    for demand in 90 0; do
        for times in 10 30; do
            LD_PRELOAD="$work/shim.so" valgrind --tool=callgrind --callgrind-out-file="$work/od.out" \
                "$work/bench" profile-on-demand "$demand" "$times" > /dev/null 2> "$work/od.log"
            counts[$demand.$times]=$(sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$work/od.log" | tr -d ,)
        done
    done
    lazy=$(( (counts[90.30] - counts[90.10]) / 20 ))
    eager=$(( (counts[0.30] - counts[0.10]) / 20 ))
    echo "instructions per boot of 100 Ghost-shaped modules: 90 on demand $lazy, all at boot $eager"
    python3 -c "print(f'ratio: {$lazy / $eager:.3f} (goal ≤ 0.25)')"
    exit 0
fi
if [ "$mode" = many ]; then
    for contender in mosaic dictionary; do
        LD_PRELOAD="$work/shim.so" valgrind --tool=callgrind --callgrind-out-file="$work/cold.out" \
            "$work/bench" cold "$contender" > /dev/null 2> "$work/cold.log"
        sed -n "s/.*refs: *\([0-9,]*\).*/instructions of a new process, cold $contender: \1/p" "$work/cold.log"
    done
fi
for rounds in 40 240; do
    LD_PRELOAD="$work/shim.so" valgrind --tool=callgrind --callgrind-out-file="$work/$rounds.out" \
        "$work/bench" "profile-$mode" "$rounds" > /dev/null 2> "$work/$rounds.log"
done
python3 - "$work/40.out" "$work/240.out" "$mode" <<'PY'
import re, subprocess, sys
metadata = re.compile(r'getGenericMetadata|MetadataCache|GenericCacheEntry|getCache\(|ConcurrentReadableHashMap|'
                      r'awaitSatisfyingState|CanonicalPrespecialized|\$sSqMa|checkMetadataState|'
                      r'swift_getTypeByMangled|_swift_instantiate')
def load(path):
    out = subprocess.run(['callgrind_annotate', '--threshold=100', path], capture_output=True, text=True).stdout
    total = meta = 0
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+) \([ \d.]+%\)\s+(.*)', line)
        if not m or 'PROGRAM TOTALS' in line:
            continue
        count = int(m.group(1).replace(',', ''))
        total += count
        if metadata.search(m.group(2)):
            meta += count
    return total, meta
(t40, m40), (t240, m240) = load(sys.argv[1]), load(sys.argv[2])
unit = 'service' if sys.argv[3] == 'many' else 'delivery'
print(f"instructions per {unit}: {(t240 - t40) / 200_000:.0f}, "
      f"of which in the generic-metadata cache: {(m240 - m40) / 200_000:.0f}")
PY
