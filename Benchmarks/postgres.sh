#!/usr/bin/env bash
# The benchmarks on PostgreSQL: starts a cluster of its own (in a temporary directory, as `nobody` when run as root,
# since PostgreSQL refuses root; default settings, fsync on), then runs `MosaicBenchmarks MODE URL` RUNS times (3 by
# default), MODE being `propagation` (cross-instance state, the default) or `durable` (durable events). Needs
# Debian's postgresql. Run from the repository root: bash Benchmarks/postgres.sh [MODE]
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/pg-cluster.sh
swift build -c release --package-path Benchmarks --product MosaicBenchmarks >/dev/null
for _ in $(seq "${RUNS:-3}"); do
    Benchmarks/.build/release/MosaicBenchmarks "${1:-propagation}" "postgres://bench@127.0.0.1:$port/bench?sslmode=disable"
done
