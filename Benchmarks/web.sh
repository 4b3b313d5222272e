#!/usr/bin/env bash
# wrk against Ghost's dashboard and a bare Hummingbird route serving the same bytes, in the same run, release
# builds; then Ghost's /dashboard and Art's route with Art isolated (Ghost's default) against a Ghost that runs
# every module in process; then the latency percentiles of four Ghost routes: /dashboard, /modules, GET /open?url=…
# (the page that asks to confirm a link) and a module's API route (/api/weather/Oslo).
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

# Art runs in a process of its own in the Ghost above (its default). Another Ghost runs every module in process:
# /dashboard with Art's widget (goal >= 0.7) and Art's route, whose every request crosses to Art's process
# (/api/art/today, goal >= 0.5), each isolated against in process, alternating pairs again. (Pages are kept
# rendered while nothing they show changes, so /dashboard calls Art's process only when it does.)
.build/release/ghost --port 8183 --data-directory "$data/in-process" --isolate none >/dev/null &
inprocess=$!
trap 'kill $ghost $bare $inprocess 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -fs http://127.0.0.1:8183/dashboard >/dev/null && break; sleep 0.1; done
for path in /dashboard /api/art/today; do
    ratios=()
    for _ in $(seq "$pairs"); do
        read -r isolated_rate isolated_p50 isolated_p99 < <(measure "http://127.0.0.1:8181$path")
        read -r local_rate local_p50 local_p99 < <(measure "http://127.0.0.1:8183$path")
        printf '%-32s %12s %10s %10s\n' "ghost $path, Art isolated" "$isolated_rate" "$isolated_p50" "$isolated_p99"
        printf '%-32s %12s %10s %10s\n' "ghost $path, Art in process" "$local_rate" "$local_p50" "$local_p99"
        ratios+=("$(awk -v i="$isolated_rate" -v l="$local_rate" 'BEGIN { printf "%.2f", i / l }')")
    done
    goal=$([ "$path" = /dashboard ] && echo 0.7 || echo 0.5)
    printf '%s\n' "${ratios[@]}" | sort -n | awk -v path="$path" -v goal="$goal" '{ r[NR] = $1 } END {
        printf "%s, isolated / in process: ", path; for (i = 1; i <= NR; i++) printf "%s ", r[i]
        printf "\nmedian ratio: %s (goal >= %s)\n", r[int((NR + 1) / 2)], goal }'
done
for path in /modules "/open?url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DOslo" /api/weather/Oslo; do
    read -r rate p50 p99 < <(measure "http://127.0.0.1:8181$path")
    printf '%-32s %12s %10s %10s\n' "ghost ${path%%\?*}" "$rate" "$p50" "$p99"
done
