#!/usr/bin/env bash
# CPU time per request of Ghost's /dashboard and of the bare Hummingbird route serving the same bytes: `perf record -e
# cpu-clock` on each server for 5 s under `wrk -t2 -c32`, in alternating pairs, release builds. Unlike the requests/s
# of web.sh, the figure leaves out wrk's own share of the two cores.
# Usage: bash Benchmarks/web-cpu.sh [pairs]   (3 unless given; needs wrk and perf: apt-get install wrk linux-perf)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/web-servers.sh >/dev/null

# "µs-per-request requests/s" of the server `pid` under 8 s of wrk against `url`, sampled for 5 s of them at 2 kHz.
measure() {
    wrk -t2 -c32 -d8s "$2" >"$data/wrk" &
    local load=$!
    sleep 1
    perf record -e cpu-clock -F 2000 -p "$1" -o "$data/perf" -- sleep 5 >/dev/null 2>&1
    wait "$load"
    local samples rate
    samples="$(perf script -i "$data/perf" 2>/dev/null | wc -l)"
    rate="$(awk '/Requests\/sec/ {print $2}' "$data/wrk")"
    awk -v s="$samples" -v r="$rate" 'BEGIN { printf "%.1f %s\n", s / 2000 / 5 / r * 1e6, r }'
}

echo "page: $(wc -c <"$data/dashboard.html") bytes"
for pair in $(seq "${1:-3}"); do
    read -r ghost_us ghost_rate < <(measure "$ghost" http://127.0.0.1:8181/dashboard)
    read -r bare_us bare_rate < <(measure "$bare" http://127.0.0.1:8182/dashboard)
    awk -v p="$pair" -v g="$ghost_us" -v gr="$ghost_rate" -v b="$bare_us" -v br="$bare_rate" 'BEGIN {
        printf "pair %s: ghost %s µs a request (%s/s), bare %s µs (%s/s), ghost / bare %.2f\n",
            p, g, gr, b, br, g / b }'
done
