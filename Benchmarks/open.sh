#!/usr/bin/env bash
# wrk against Ghost's link endpoint, release build: `POST /open` with the page's token opens
# ghost://dashboard/weather/city?name=Oslo, which runs the Weather module's handler and persists the favourite city
# in SQLite (the state write each link costs). Prints requests/s and the latency percentiles.
# Usage: bash Benchmarks/open.sh [seconds] [connections]   (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
connections="${2:-32}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

swift build -c release --product ghost
data="$(mktemp -d)"
script="$(mktemp --suffix=.lua)"
.build/release/ghost --port 8183 --data-directory "$data" >/dev/null &
ghost=$!
trap 'kill $ghost 2>/dev/null; rm -rf "$data" "$script"' EXIT
for _ in $(seq 100); do curl -fs http://127.0.0.1:8183/dashboard >/dev/null && break; sleep 0.1; done
token="$(curl -fs http://127.0.0.1:8183/dashboard | sed -n 's/.*name="csrf-token" content="\([0-9a-f]*\)".*/\1/p')"
cat >"$script" <<LUA
wrk.method = "POST"
wrk.body = "url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DOslo"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["X-CSRF-Token"] = "$token"
LUA
curl -fs -o /dev/null -X POST -H "X-CSRF-Token: $token" --data-binary "url=ghost%3A%2F%2Fdashboard%2Fweather%2Fcity%3Fname%3DOslo" \
    http://127.0.0.1:8183/open
wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$script" http://127.0.0.1:8183/open \
    | grep -E 'Requests/sec|^ +50%|^ +90%|^ +99%|Non-2xx'
