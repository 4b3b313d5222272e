"""Runs the peers' drivers and `MosaicBenchmarks durable` in turn, round after round, on one PostgreSQL cluster, and
prints every round's figures and their medians as Markdown. Started by Benchmarks/peers.sh, which installs the peers
and starts the cluster: python peers.py --base postgres://USER@HOST:PORT --mosaic BIN [--rounds 3] [--rate 100]."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

HERE = Path(__file__).resolve().parent
SYSTEMS = ["pgqueuer", "procrastinate", "awa", "mosaic"]
DRIVERS = {"pgqueuer": "pgqueuer_peer.py", "procrastinate": "procrastinate_peer.py", "awa": "awa_peer.py"}
# A run that takes longer is stopped and reported; the slowest peer's round took about five minutes here.
RUN_LIMIT = 1800

THROUGHPUT_ROWS = [
    ("publish_1", "publish, 1 publisher, a commit each (2,000)"),
    ("publish_16", "publish, 16 publishers"),
    ("publish_64", "publish, 64 publishers"),
    ("publish_batch", "publish, batches of 100"),
    ("drain_1", "drain, 1 consumer (32,000)"),
    ("drain_2", "drain, 2 consumers"),
]
LATENCY_ROWS = [
    ("one_at_a_time", "one at a time, p50 / p99"),
    ("fixed", "at {rate}/s, p50 / p99"),
    ("fixed_returned", "  of which the enqueue returned, p50 / p99"),
    ("fixed_floor", "  floor: one-row synced commit every 10 ms, same seconds, p50 / p99"),
]

# MosaicBenchmarks durable's rows, by their titles, and the keys the peers' drivers use for the same rows.
MOSAIC_RATES = {
    "publish, 1 publisher": "publish_1",
    "publish, 16 publishers": "publish_16",
    "publish, 64 publishers": "publish_64",
    "publish, batches of 100": "publish_batch",
    "drain, 1 consumer": "drain_1",
    "drain, 2 consumers": "drain_2",
}
MOSAIC_LATENCIES = {
    "one at a time": "one_at_a_time",
    "of which publish returned (fixed)": "fixed_returned",
    "floor (fixed): one-row commit every 10 ms": "fixed_floor",
}


def parse_mosaic(output: str, rate: int) -> dict[str, object]:
    """The rows of `MosaicBenchmarks durable URL RATE`'s output (latencies printed in µs, kept in ms)."""
    results: dict[str, object] = {}
    latencies = dict(MOSAIC_LATENCIES, **{f"at {rate} events/s (fixed)": "fixed"})
    seen_rates: set[str] = set()
    for line in output.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        title = cells[0]
        if title in MOSAIC_RATES and len(cells) == 4:
            key = MOSAIC_RATES[title]
            # "publish, batches of 100" is printed once, for the one-consumer backlog.
            if key not in seen_rates:
                results[key] = float(cells[2])
                seen_rates.add(key)
        elif title in latencies and len(cells) == 6:
            n, p50, p99, _, most = (int(cell) for cell in cells[1:])
            results[latencies[title]] = {"p50": p50 / 1_000, "p99": p99 / 1_000, "max": most / 1_000, "n": n}
    return results


def run_one(system: str, url: str, args: argparse.Namespace, unavailable: dict[str, str]) -> dict[str, object]:
    if system in unavailable:
        print(f"\n== {system}: not run: {unavailable[system]}", flush=True)
        return {"failures": [f"not run: {unavailable[system]}"]}
    if system == "mosaic":
        command = [args.mosaic, "durable", url, str(args.rate)]
    else:
        command = [sys.executable, str(HERE / DRIVERS[system]), url, str(args.rate)]
    print(f"\n== {system}: {' '.join(command)}  ({datetime.datetime.now(datetime.timezone.utc):%H:%M:%S} UTC, "
          f"load {os.getloadavg()[0]:.2f})", flush=True)
    started = time.monotonic()
    lines: list[str] = []
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=HERE)
        watchdog = threading.Timer(RUN_LIMIT, process.kill)
        watchdog.start()
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            lines.append(line)
        status = process.wait()
        watchdog.cancel()
    except OSError as error:
        return {"failures": [f"could not start {command[0]}: {error}"]}
    output = "".join(lines)
    print(f"== {system}: {time.monotonic() - started:.0f} s, exit status {status}", flush=True)
    if system == "mosaic":
        results: dict[str, object] = parse_mosaic(output, args.rate)
        results["failures"] = [] if status == 0 else [f"exit status {status}"]
        return results
    found = [line for line in lines if line.startswith("RESULT ")]
    if not found:
        last = [line.strip() for line in lines if line.strip()][-1:] or ["no output"]
        return {"failures": [f"exit status {status}, no results: {last[0]}"]}
    return json.loads(found[-1][len("RESULT "):])


def cell(value: object, key: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, dict):
        return f"{value['p50']:.2f} / {value['p99']:.2f}" if value else "—"
    return f"{value:,.0f}"


def spread(values: list[object], latency: bool) -> str:
    """Median over the rounds and the range, in brackets."""
    present = [v for v in values if v not in (None, {})]
    if not present:
        return "—"
    if latency:
        p50 = [v["p50"] for v in present]  # type: ignore[index]
        p99 = [v["p99"] for v in present]  # type: ignore[index]
        return (f"{statistics.median(p50):.2f} / {statistics.median(p99):.2f} "
                f"[{min(p50):.2f}–{max(p50):.2f} / {min(p99):.2f}–{max(p99):.2f}]")
    numbers = [float(v) for v in present]  # type: ignore[arg-type]
    return f"{statistics.median(numbers):,.0f} [{min(numbers):,.0f}–{max(numbers):,.0f}]"


def median_of(values: list[object], part: str | None) -> float | None:
    present = [v for v in values if v not in (None, {})]
    if not present:
        return None
    return statistics.median(v[part] if part else v for v in present)  # type: ignore[index]


def against_best(values: dict[str, list[object]], latency: bool) -> str:
    """Mosaic's median against the best peer's: throughput over theirs, or p99 latency over theirs."""
    part = "p99" if latency else None
    mine = median_of(values["mosaic"], part)
    peers = {s: m for s in SYSTEMS[:-1] if (m := median_of(values[s], part)) is not None}
    if mine is None or not peers:
        return "—"
    best = (min if latency else max)(peers, key=lambda s: peers[s])
    ratio = mine / peers[best]
    leads = ratio < 1 if latency else ratio > 1
    return f"{'p99 ' if latency else ''}{ratio:.2f}× {best}'s: {'leads' if leads else 'trails'}"


def report(rounds: list[dict[str, dict[str, object]]], rate: int) -> None:
    rows = [(k, t, False) for k, t in THROUGHPUT_ROWS] + [(k, t.format(rate=rate), True) for k, t in LATENCY_ROWS]
    print(f"\n## Medians over {len(rounds)} rounds [lowest–highest]; jobs or events/s, latencies in ms\n")
    print("| row | " + " | ".join(SYSTEMS) + " | Mosaic against the best peer |")
    print("|---|" + "---:|" * (len(SYSTEMS) + 1))
    for key, title, latency in rows:
        values = {s: [r[s].get(key) for r in rounds] for s in SYSTEMS}
        versus = "" if key == "fixed_floor" else against_best(values, latency)
        print(f"| {title} | " + " | ".join(spread(values[s], latency) for s in SYSTEMS) + f" | {versus} |")

    print(f"\n## Every round ({'; '.join(f'round {i + 1}' for i in range(len(rounds)))})\n")
    print("| row | " + " | ".join(SYSTEMS) + " |")
    print("|---|" + "---:|" * len(SYSTEMS))
    for key, title, _ in rows:
        print(f"| {title} | " + " | ".join("; ".join(cell(r[s].get(key), key) for r in rounds) for s in SYSTEMS) + " |")

    failures = [(i + 1, s, f) for i, r in enumerate(rounds) for s in SYSTEMS for f in r[s].get("failures", [])]
    print("\n## What failed\n")
    for number, system, failure in failures:
        print(f"- round {number}, {system}: {failure}")
    if not failures:
        print("Nothing: every system ran every row in every round.")
    print("\nRESULTS " + json.dumps(rounds))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="postgres://USER@HOST:PORT, without a database")
    parser.add_argument("--mosaic", required=True, help="the MosaicBenchmarks executable")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=int, default=100, help="the fixed offered rate, jobs/s")
    parser.add_argument("--unavailable", help="a file of lines 'SYSTEM: why', for peers that could not install")
    args = parser.parse_args()
    unavailable: dict[str, str] = {}
    if args.unavailable and Path(args.unavailable).exists():
        for line in Path(args.unavailable).read_text().splitlines():
            system, _, why = line.partition(": ")
            unavailable[system] = why
    rounds: list[dict[str, dict[str, object]]] = []
    with psycopg.connect(f"{args.base}/bench", autocommit=True) as admin:
        for number in range(1, args.rounds + 1):
            # Each round starts with the next system, so that none always runs first or right after another.
            shift = (number - 1) % len(SYSTEMS)
            results: dict[str, dict[str, object]] = {}
            for system in SYSTEMS[shift:] + SYSTEMS[:shift]:
                database = f"round{number}_{system}"
                admin.execute(f"CREATE DATABASE {database}")
                results[system] = run_one(system, f"{args.base}/{database}?sslmode=disable", args, unavailable)
                admin.execute(f"DROP DATABASE {database} WITH (FORCE)")
            rounds.append(results)
            print(f"\n== round {number} of {args.rounds} done", flush=True)
    report(rounds, args.rate)


if __name__ == "__main__":
    main()
