#!/usr/bin/env bash
# The outbox against real peers in the same run: installs pgqueuer, procrastinate and awa (pinned, in
# Benchmarks/.peers-venv), starts a PostgreSQL cluster of its own as postgres.sh does (default settings, fsync on),
# and runs each peer's driver (Benchmarks/peers/*_peer.py) and `MosaicBenchmarks durable URL RATE` in turn, a new
# database each, for ROUNDS rounds; then prints every round's figures and the medians as Markdown. A peer that cannot
# install or run is reported with the reason, and the others go on. Needs Debian's postgresql and python3-venv.
# Run from anywhere: bash Benchmarks/peers.sh [ROUNDS] [RATE]  (3 rounds, 100 jobs/s by default; the whole output
# is also kept in Benchmarks/.peers-venv/last-run.log)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
rate="${2:-100}"
venv=Benchmarks/.peers-venv
source Benchmarks/pg-cluster.sh
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# Each peer installs on its own, so that one that cannot leaves the others running; every version is pinned.
unavailable="$venv/unavailable.txt"
: >"$unavailable"
"$venv/bin/pip" install -q -c Benchmarks/peers/constraints.txt psycopg psycopg-binary psycopg-pool \
    >"$venv/pip-common.log" 2>&1 || { echo "cannot install psycopg, which every driver needs:" >&2;
    tail -5 "$venv/pip-common.log" >&2; exit 1; }
for peer in "pgqueuer:pgqueuer asyncpg" "procrastinate:procrastinate" "awa:awa-pg"; do
    name="${peer%%:*}"
    if ! "$venv/bin/pip" install -q -c Benchmarks/peers/constraints.txt ${peer#*:} >"$venv/pip-$name.log" 2>&1; then
        echo "$name: could not install ($(grep -m1 -i error "$venv/pip-$name.log" || tail -1 "$venv/pip-$name.log"))" \
            >>"$unavailable"
    fi
done
swift build -c release --package-path Benchmarks --product MosaicBenchmarks >/dev/null
{
    echo "# bash Benchmarks/peers.sh $rounds $rate"
    echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Benchmarks/Sources || echo ' (with uncommitted changes)'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$("$bin/postgres" --version); $("$venv/bin/python" --version); $(swift --version 2>/dev/null | head -1)"
    echo "peers: $("$venv/bin/pip" freeze | grep -Ei '^(pgqueuer|procrastinate|awa-pg|asyncpg|psycopg)==' | tr '\n' ' ')"
    "$venv/bin/python" Benchmarks/peers/peers.py --base "postgres://bench@127.0.0.1:$port" \
        --mosaic "$PWD/Benchmarks/.build/release/MosaicBenchmarks" --rounds "$rounds" --rate "$rate" \
        --unavailable "$unavailable"
    echo "ended $(date -u '+%Y-%m-%d %H:%M:%S') UTC"
} 2>&1 | tee "$venv/last-run.log"
