#!/usr/bin/env bash
# Budgets in counts: instructions (callgrind) and heap allocations per operation, for the operations in
# Sources/MosaicBenchmarks/BudgetOperations.swift, checked against Benchmarks/budgets.txt. Each operation runs in two
# processes, repeated a few and many times; the difference divided by the difference in repetitions is its count
# per operation, so starting the process and the setup cancel out. A count more than 3 % over its budget fails the
# run, naming the operation, the budget and the count. Valgrind counts the same instructions in any hour, which no
# timing on this machine does. `Benchmarks/budgets.sh --print` prints the table and checks nothing.
# Needs valgrind; builds the benchmarks in release first.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swift build -c release --package-path Benchmarks --product MosaicBenchmarks
source Benchmarks/valgrind-shim.sh

# One line per run: operation, repetitions, instructions, heap allocations.
while read -r operation few many; do
    for count in "$few" "$many"; do
        LD_PRELOAD="$work/shim.so" valgrind --tool=callgrind --callgrind-out-file="$work/out" \
            "$work/bench" budget "$operation" "$count" > /dev/null 2> "$work/log" ||
            { echo "budget $operation $count failed:" >&2; tail -20 "$work/log" >&2; exit 1; }
        instructions=$(sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$work/log" | tr -d ,)
        allocations=$(sed -n 's/^heap allocations: \([0-9]*\)$/\1/p' "$work/log" | tail -1)
        echo "$operation $count $instructions $allocations" >> "$work/counts"
    done
done <<'RUNS'
resolve 100000 1100000
injected 100000 1100000
transient 100000 1100000
root-and-3 20000 220000
transient-direct 100000 1100000
root-and-3-direct 20000 220000
link-among-1000 2000 22000
event-to-1 1000 11000
durable-to-1 200 1200
dashboard 20 220
bare-route 20 220
boot-100 2 12
RUNS

python3 - "$work/counts" Benchmarks/budgets.txt "${1:-}" <<'PY'
import sys
runs = {}
for line in open(sys.argv[1]):
    operation, count, instructions, allocations = line.split()
    runs.setdefault(operation, []).append((int(count), int(instructions), int(allocations)))
budgets = {}
for line in open(sys.argv[2]):
    line = line.split('#')[0].split()
    if line:
        budgets[line[0]] = (int(line[1].replace(',', '')), float(line[2].replace(',', '')))
counts = {}
for operation, ((few, i1, a1), (many, i2, a2)) in runs.items():
    counts[operation] = ((i2 - i1) / (many - few), (a2 - a1) / (many - few))
print(f"{'operation':<18} {'instructions':>12} {'budget':>9} {'allocations':>11} {'budget':>7}")
failures = []
for operation, (instructions, allocations) in counts.items():
    budget = budgets.get(operation)
    shown = f"{budget[0]:>9} {'':>11} {budget[1]:>7g}" if budget else f"{'none':>9} {'':>11} {'none':>7}"
    print(f"{operation:<18} {instructions:>12.0f} {shown[:9]} {allocations:>11.2f} {shown[-7:]}")
    if budget is None:
        failures.append(f"{operation}: no budget in Benchmarks/budgets.txt")
        continue
    # 3 % over the budget, and for allocations at least a tenth of one: a count that is a whole number per
    # operation lands a few hundredths off it when the process does a little more or less around the loop.
    if instructions > budget[0] * 1.03:
        failures.append(f"{operation}: {instructions:.0f} instructions per operation, over its budget of {budget[0]} "
                        f"by {100 * (instructions / max(budget[0], 1) - 1):.1f} % (3 % allowed)")
    if allocations > max(budget[1] * 1.03, budget[1] + 0.1):
        failures.append(f"{operation}: {allocations:.2f} heap allocations per operation, over its budget of "
                        f"{budget[1]:g}")
print("\nagainst the same run's floor: instructions, and allocations more")
for operation, floor in [('transient', 'transient-direct'), ('root-and-3', 'root-and-3-direct'),
                         ('dashboard', 'bare-route')]:
    if operation in counts and floor in counts:
        (i, a), (fi, fa) = counts[operation], counts[floor]
        print(f"  {operation} / {floor}: {i / fi:.2f}x, {a - fa:+.1f}")
if sys.argv[3] != '--print' and failures:
    print("\nOver budget (lower a budget in the commit that earns it; raise one only with the reason):", file=sys.stderr)
    for failure in failures:
        print(f"  {failure}", file=sys.stderr)
    sys.exit(1)
PY
