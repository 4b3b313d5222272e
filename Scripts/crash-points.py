#!/usr/bin/env python3
"""Durable handlers that take a transaction, killed at every boundary of a commit: each effect applied exactly once.

Runs `crash-points` (Tests/CrashPoints) on the embedded SQLite store (one instance) and on a PostgreSQL cluster of
its own (two instances at once). Each process publishes numbered events, each in a transaction that records its
number as published, and handles every event with two durable handlers whose transactions record the number as
handled. Each process stops itself with SIGKILL, one time in CRASH_ONE_IN (60 unless set) at each crash point:

- before-effect: a handler ran, before it recorded anything;
- inside-commit: a storage transaction's statements ran (a publish, a handler's commit, a batch's completion), before
  it committed;
- after-commit: it committed, before the process learned of it.

A killed process is started again at once, and goes on publishing where the database says it stopped, until EVENTS
(1,000 unless set) are published per instance; a last run without crashes drains the outbox. Then, in the database:

- every published number was handled exactly once by each handler: none lost, none applied twice;
- no number was handled that was never published;
- no delivery is left pending or parked (on SQLite done ones are deleted; on PostgreSQL all are done).

Prints, per store, the events, the kills at each point and the outcome; exits non-zero on any violation, or when a
process fails for another reason. Everything it starts is stopped.

    python3 Scripts/crash-points.py .build/debug/crash-points
"""
import collections, json, os, random, re, sqlite3, subprocess, sys, tempfile, shutil, time
from pgcluster import Cluster

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/crash-points"
if not os.path.exists(binary):
    sys.exit(f"needs {binary} (swift build --product crash-points)")
EVENTS = int(os.environ.get("EVENTS", "1000"))
CRASH_ONE_IN = int(os.environ.get("CRASH_ONE_IN", "60"))
SEED = int(os.environ.get("SEED", str(random.randrange(1 << 32))))
print(f"seed {SEED} (SEED={SEED} replays the crash choices)")
HANDLERS = ["count", "mark"]
failures = []


class Process:
    """One instance of crash-points, started again whenever it kills itself, until it has published its share."""

    def __init__(self, store, instance, root):
        self.store, self.instance, self.root = store, instance, root
        self.kills = collections.Counter()
        self.runs = 0
        self.process = None
        self.log = open(os.path.join(root, f"instance-{instance}.log"), "a")

    def start(self, crash_one_in):
        self.runs += 1
        self.output = os.path.join(self.root, f"instance-{self.instance}-run-{self.runs}.out")
        self.process = subprocess.Popen(
            [binary, "--store", self.store, "--instance", str(self.instance), "--events", str(EVENTS),
             "--crash-one-in", str(crash_one_in), "--seed", str(SEED * 1000 + self.instance * 100 + self.runs)],
            stdout=open(self.output, "w"), stderr=self.log)

    def lines(self):
        return open(self.output).read().splitlines()

    def published_all(self):
        return f"published {EVENTS}" in self.lines()

    def poll(self):
        """Starts the process again if it killed itself; fails the run if it stopped otherwise."""
        code = self.process.poll()
        if code is None:
            return
        crash = next((line[len("crash at "):] for line in self.lines() if line.startswith("crash at ")), None)
        if code == -9 and crash:
            self.kills[crash] += 1
            self.start(CRASH_ONE_IN)
        else:
            failures.append(f"instance {self.instance} exited with {code} (see {self.log.name})")
            self.start(CRASH_ONE_IN)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                failures.append(f"instance {self.instance} did not stop on SIGTERM")


def run(name, store, instances, root, rows):
    """Runs `instances` processes on `store` until all published and drained; checks the rows `rows()` returns."""
    processes = [Process(store, index, root) for index in range(instances)]
    for process in processes:
        process.start(CRASH_ONE_IN)
    deadline = time.time() + 600
    while time.time() < deadline and not all(p.published_all() for p in processes):
        for process in processes:
            process.poll()
        time.sleep(0.05)
    # The last runs crash no more: they drain what is left.
    for process in processes:
        process.stop()
        process.start(0)
    published, handled, waiting = rows()
    while time.time() < deadline and waiting() > 0:
        time.sleep(0.2)
    published, handled, waiting = rows()
    left = waiting()
    for process in processes:
        process.stop()
    published, handled, _ = rows()
    violations = []
    expected = EVENTS * instances
    if len(published) != expected:
        violations.append(f"{len(published)} numbers published of {expected}")
    for handler in HANDLERS:
        counts = handled[handler]
        lost = [n for n in published if counts.get(n, 0) == 0]
        twice = {n: c for n, c in counts.items() if c > 1}
        unpublished = [n for n in counts if n not in published]
        if lost:
            violations.append(f"{handler}: {len(lost)} published numbers never handled, e.g. {sorted(lost)[:5]}")
        if twice:
            violations.append(f"{handler}: {len(twice)} numbers handled more than once, e.g. {sorted(twice.items())[:5]}")
        if unpublished:
            violations.append(f"{handler}: {len(unpublished)} numbers handled but never published")
    if left:
        violations.append(f"{left} deliveries still pending or parked after the drain")
    kills = sum((p.kills for p in processes), collections.Counter())
    print(f"| {name} | {instances} | {len(published)} | " + " | ".join(str(kills[point]) for point in
          ["before-effect", "inside-commit", "after-commit"]) + f" | {len(violations)} |")
    for violation in violations:
        print(f"  violation: {violation}")
    failures.extend(f"{name}: {violation}" for violation in violations)
    if sum(kills.values()) < 3:
        failures.append(f"{name}: only {sum(kills.values())} kills; raise EVENTS or lower CRASH_ONE_IN")


def numbers(values, prefix):
    """The recorded numbers of every bucket key starting with `prefix`: a set for published, counts for handlers."""
    published, counts = set(), {}
    for key, value in values:
        if not key.startswith(prefix):
            continue
        data = json.loads(value)
        if isinstance(data, list):
            published.update(data)
        else:
            for number, count in data.items():
                counts[int(number)] = counts.get(int(number), 0) + count
    return published, counts


print("| store | instances | events | killed before the effect | inside the commit | after the commit | violations |")
print("|---|---:|---:|---:|---:|---:|---:|")

root = tempfile.mkdtemp(prefix="mosaic-crash-points-")
try:
    directory = os.path.join(root, "sqlite")

    def sqlite_rows():
        path = os.path.join(directory, "state.sqlite")
        if not os.path.exists(path):
            return set(), {h: {} for h in HANDLERS}, lambda: 1
        with sqlite3.connect(path, timeout=30) as db:
            values = [(k, v.decode() if isinstance(v, bytes) else v) for k, v in
                      db.execute("SELECT id, value FROM mosaic_state WHERE id LIKE 'crash-points.%'")]

        def waiting():
            with sqlite3.connect(path, timeout=30) as db:
                return db.execute("SELECT count(*) FROM mosaic_delivery").fetchone()[0]
        published, _ = numbers(values, "crash-points.published.")
        return published, {h: numbers(values, f"crash-points.{h}.")[1] for h in HANDLERS}, waiting

    run("SQLite", f"sqlite:{directory}", 1, root, sqlite_rows)

    cluster = Cluster("mosaic-crash-points-pg-")
    try:
        url = cluster.start()

        def sql(statement):
            result = subprocess.run(
                [f"{cluster.bin_dir}/psql", "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "ghost", "-d", "ghost",
                 "-At", "-F", "\t", "-c", statement], capture_output=True, text=True, timeout=60)
            return [line.split("\t") for line in result.stdout.splitlines() if line]

        def postgres_rows():
            values = sql("SELECT id, value FROM mosaic_state WHERE id LIKE 'crash-points.%'")
            published, _ = numbers(values, "crash-points.published.")

            def waiting():
                rows = sql("SELECT count(*) FROM mosaic_delivery WHERE state <> 'done'")
                return int(rows[0][0]) if rows else 1
            return published, {h: numbers(values, f"crash-points.{h}.")[1] for h in HANDLERS}, waiting

        run("PostgreSQL", f"postgres:{url}", 2, root, postgres_rows)
    finally:
        cluster.stop(show_logs=bool(failures))
finally:
    if failures:
        for log in sorted(f for f in os.listdir(root) if f.endswith(".log")):
            print(f"--- {log}", open(os.path.join(root, log)).read()[-3000:], sep="\n")
    shutil.rmtree(root, ignore_errors=True)

for failure in failures:
    print(f"FAILED: {failure}")
sys.exit(1 if failures else 0)
