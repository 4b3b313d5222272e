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

# `pairs` alternating pairs of LABEL_A at URL_A, then LABEL_B at URL_B; prints each and the median of the ratios
# A / B against GOAL, under TITLE.
compare() {
    local title="$1" label_a="$2" url_a="$3" label_b="$4" url_b="$5" goal="$6" rate_a p50_a p99_a rate_b p50_b p99_b
    local ratios=()
    for _ in $(seq "$pairs"); do
        read -r rate_a p50_a p99_a < <(measure "$url_a")
        read -r rate_b p50_b p99_b < <(measure "$url_b")
        printf '%-32s %12s %10s %10s\n' "$label_a" "$rate_a" "$p50_a" "$p99_a"
        printf '%-32s %12s %10s %10s\n' "$label_b" "$rate_b" "$p50_b" "$p99_b"
        ratios+=("$(awk -v a="$rate_a" -v b="$rate_b" 'BEGIN { printf "%.2f", a / b }')")
    done
    printf '%s\n' "${ratios[@]}" | sort -n | awk -v title="$title" -v goal="$goal" '{ r[NR] = $1 } END {
        printf "%s: ", title; for (i = 1; i <= NR; i++) printf "%s ", r[i]
        printf "\nmedian ratio: %s (goal >= %s)\n", r[int((NR + 1) / 2)], goal }'
}

printf '%-32s %12s %10s %10s\n' route requests/s p50 p99
compare "/dashboard, ghost / bare route" "ghost /dashboard" http://127.0.0.1:8181/dashboard \
    "bare Hummingbird route" http://127.0.0.1:8182/dashboard 0.8

# Art runs in a process of its own in the Ghost above (its default). Another Ghost runs every module in process:
# /dashboard with Art's widget (goal >= 0.7) and Art's route, whose every request crosses to Art's process
# (/api/art/today, goal >= 0.5), each isolated against in process. (Pages are kept rendered while nothing they
# show changes, so /dashboard calls Art's process only when it does.)
.build/release/ghost --port 8183 --data-directory "$data/in-process" --isolate none >/dev/null &
inprocess=$!
trap 'kill $ghost $bare $inprocess 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -fs http://127.0.0.1:8183/dashboard >/dev/null && break; sleep 0.1; done
compare "/dashboard, isolated / in process" "ghost /dashboard, Art isolated" http://127.0.0.1:8181/dashboard \
    "ghost /dashboard, Art in process" http://127.0.0.1:8183/dashboard 0.7
compare "/api/art/today, isolated / in process" "ghost /api/art/today, Art isolated" \
    http://127.0.0.1:8181/api/art/today "ghost /api/art/today, in process" http://127.0.0.1:8183/api/art/today 0.5
for path in /modules "/open?url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DOslo" /api/weather/Oslo; do
    read -r rate p50 p99 < <(measure "http://127.0.0.1:8181$path")
    printf '%-32s %12s %10s %10s\n' "ghost ${path%%\?*}" "$rate" "$p50" "$p99"
done
