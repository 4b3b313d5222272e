#!/usr/bin/env bash
# wrk against Ghost's dashboard and a bare Hummingbird route serving the same bytes, in the same run, release
# builds; then the latency percentiles of four Ghost routes: /dashboard, /modules, GET /open?url=… (the page that asks
# to confirm a link) and a module's API route (/api/weather/Oslo).
# Usage: bash Benchmarks/web.sh [seconds] [pairs]   (5 pairs unless given; needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
pairs="${2:-5}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

source Benchmarks/web-servers.sh

# requests/s, p50 and p99 of `wrk -t2 -c32 --latency` against URL; fails on any non-2xx answer.
measure() {
    local out
    out="$(wrk -t2 -c32 -d"${seconds}s" --latency "$1")"
    if grep -q 'Non-2xx' <<<"$out"; then echo "non-2xx answers from $1" >&2; exit 1; fi
    awk '/Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {printf "%s %s %s\n", r, p50, p99}' <<<"$out"
}

# `pairs` alternating pairs, Ghost first, then the bare route: the goal is the median of their ratios.
printf '%-32s %12s %10s %10s\n' route requests/s p50 p99
ratios=()
for _ in $(seq "$pairs"); do
    read -r ghost_rate ghost_p50 ghost_p99 < <(measure "http://127.0.0.1:8181/dashboard")
    read -r bare_rate bare_p50 bare_p99 < <(measure "http://127.0.0.1:8182/dashboard")
    printf '%-32s %12s %10s %10s\n' "ghost /dashboard" "$ghost_rate" "$ghost_p50" "$ghost_p99"
    printf '%-32s %12s %10s %10s\n' "bare Hummingbird route" "$bare_rate" "$bare_p50" "$bare_p99"
    ratios+=("$(awk -v g="$ghost_rate" -v b="$bare_rate" 'BEGIN { printf "%.2f", g / b }')")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END {
    printf "ratios: "; for (i = 1; i <= NR; i++) printf "%s ", r[i]; printf "\nmedian ratio: %s (goal >= 0.8)\n", r[int((NR + 1) / 2)] }'
for path in /modules "/open?url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DOslo" /api/weather/Oslo; do
    read -r rate p50 p99 < <(measure "http://127.0.0.1:8181$path")
    printf '%-32s %12s %10s %10s\n' "ghost ${path%%\?*}" "$rate" "$p50" "$p99"
done
