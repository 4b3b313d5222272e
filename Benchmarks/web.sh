#!/usr/bin/env bash
# wrk against Ghost's dashboard and a bare Hummingbird route, in the same run, release builds.
# Usage: bash Benchmarks/web.sh [seconds]   (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

swift build -c release --product ghost
swift build -c release --package-path Benchmarks --product bare-server
data="$(mktemp -d)"
.build/release/ghost --port 8181 --data-directory "$data" >/dev/null &
ghost=$!
Benchmarks/.build/release/bare-server 8182 &
bare=$!
trap 'kill $ghost $bare 2>/dev/null; rm -rf "$data"' EXIT
for port in 8181 8182; do
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/dashboard" >/dev/null && break; sleep 0.1; done
done

rate() { wrk -t2 -c32 -d"${seconds}s" "http://127.0.0.1:$1/dashboard" | awk '/Requests\/sec/ {print $2}'; }
ghost_rate="$(rate 8181)"
bare_rate="$(rate 8182)"
echo "ghost /dashboard:      $ghost_rate requests/s"
echo "bare Hummingbird route: $bare_rate requests/s"
awk -v g="$ghost_rate" -v b="$bare_rate" 'BEGIN { printf "ratio: %.2f (goal >= 0.5)\n", g / b }'
