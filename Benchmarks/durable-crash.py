#!/usr/bin/env python3
"""Durable events survive kill -9: at least once delivery, an exactly-once effect, duplicates counted.

Starts a PostgreSQL cluster of its own (in a temporary directory, as `nobody` when run as root), then runs
`MosaicBenchmarks durable-publish` and `durable-consume` as separate processes (separate instances):

1. The consumer is killed with SIGKILL once about a third of 10,000 events has been handled, and started again.
2. The publisher is killed with SIGKILL right after it reported an event committed (about half-way through its
   10,000); whatever it committed must still be delivered, by the consumer, without it.
3. Two consumers run at once on one subscription, nothing killed: no event may be handled by both.

The consumer's handler makes its effect idempotent with the envelope id (a row per event in demo_effect) and logs
every call (demo_call), so each scenario prints events committed, effects applied, handler calls and duplicates,
and exits non-zero when an event is lost, a process fails, or (with two consumers and no crash) an event is handled
twice. Run from the repository root, after
`swift build -c release --package-path Benchmarks`:

    python3 Benchmarks/durable-crash.py [Benchmarks/.build/release/MosaicBenchmarks]
"""
import glob, os, shutil, signal, socket, subprocess, sys, tempfile, time

binary = sys.argv[1] if len(sys.argv) > 1 else "Benchmarks/.build/release/MosaicBenchmarks"
binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
if not binaries or not os.path.exists(binary):
    sys.exit(f"needs PostgreSQL (apt-get install postgresql) and {binary} "
             "(swift build -c release --package-path Benchmarks)")
bin_dir, events = binaries[0], 10_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(*command):
    prefix = ["runuser", "-u", "nobody", "--"] if os.getuid() == 0 else []
    subprocess.run(prefix + list(command), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/tmp")


root = tempfile.mkdtemp(prefix="mosaic-durable-")
os.chmod(root, 0o777)
data, port = os.path.join(root, "pg"), free_port()
processes, failures = [], []


def sql(database, statement):
    output = subprocess.run([f"{bin_dir}/psql", "-h", "127.0.0.1", "-p", str(port), "-U", "bench", "-d", database,
                             "-At", "-c", statement], check=True, capture_output=True, text=True, cwd="/tmp")
    return output.stdout.strip()


def start(role, database, *arguments, read=False):
    url = f"postgres://bench@127.0.0.1:{port}/{database}?sslmode=disable"
    log = open(os.path.join(root, f"{database}-{role}-{len(processes)}.log"), "w")
    process = subprocess.Popen([binary, f"durable-{role}", url, *arguments],
                               stdout=subprocess.PIPE if read else subprocess.DEVNULL, stderr=log, text=True)
    processes.append(process)
    return process


def consumer(database):
    process = start("consume", database, read=True)
    assert process.stdout.readline().strip() == "consuming", "the consumer did not start"
    return process


def wait_until(condition, what, limit=300):
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > limit:
            raise TimeoutError(f"{what} not within {limit} s")
        time.sleep(0.05)


def report(database, scenario, committed):
    effects = int(sql(database, "SELECT count(*) FROM demo_effect"))
    calls = int(sql(database, "SELECT count(*) FROM demo_call"))
    stored = int(sql(database, "SELECT count(*) FROM mosaic_event"))
    twice = int(sql(database, "SELECT count(*) FROM (SELECT event_id FROM demo_call GROUP BY event_id "
                              "HAVING count(*) > 1) repeated"))
    print(f"{scenario}: {committed} committed, {stored} in the outbox, {effects} effects, {calls} handler calls, "
          f"{calls - effects} duplicates ({twice} events handled more than once)")
    if effects != stored or stored < committed:
        failures.append(f"{scenario}: an event was lost")
    return calls - effects


def database(name):
    as_postgres(f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "bench", name)
    sql(name, "CREATE TABLE demo_effect (event_id uuid PRIMARY KEY)")
    sql(name, "CREATE TABLE demo_call (event_id uuid NOT NULL, attempt integer NOT NULL)")
    return name


try:
    as_postgres(f"{bin_dir}/initdb", "-D", data, "-U", "bench", "-A", "trust")
    as_postgres(f"{bin_dir}/pg_ctl", "-D", data, "-l", os.path.join(root, "pg.log"), "-w", "-o",
                f"-p {port} -k {root} -c listen_addresses=127.0.0.1", "start")

    # 1: the consuming instance is killed mid-way and restarted.
    name = database("consumer_crash")
    first = consumer(name)
    publisher = start("publish", name, str(events))
    wait_until(lambda: int(sql(name, "SELECT count(*) FROM demo_effect")) >= events // 3, "a third handled")
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed_at = int(sql(name, "SELECT count(*) FROM demo_effect"))
    if publisher.wait() != 0:
        failures.append("consumer killed: the publisher failed (its log is in the temporary directory)")
    consumer(name)
    wait_until(lambda: int(sql(name, "SELECT count(*) FROM demo_effect")) >= events, "every event handled")
    print(f"consumer killed with SIGKILL after {killed_at} effects, then restarted")
    report(name, "consumer killed", events)

    # 2: the publishing instance is killed right after a commit.
    name = database("publisher_crash")
    consumer(name)
    publisher = start("publish", name, str(events), read=True)
    committed = 0
    for line in publisher.stdout:
        committed = int(line.split()[1])
        if committed >= events // 2:
            publisher.send_signal(signal.SIGKILL)
            break
    publisher.wait()
    stored = int(sql(name, "SELECT count(*) FROM mosaic_event"))
    wait_until(lambda: int(sql(name, "SELECT count(*) FROM demo_effect")) >= stored, "every committed event handled")
    print(f"publisher killed with SIGKILL right after reporting event {committed} committed")
    report(name, "publisher killed", committed)

    # 3: two consumers on one subscription, nothing killed.
    name = database("two_consumers")
    consumer(name)
    consumer(name)
    if start("publish", name, str(events)).wait() != 0:
        failures.append("two consumers: the publisher failed")
    wait_until(lambda: int(sql(name, "SELECT count(*) FROM demo_effect")) >= events, "every event handled")
    if report(name, "two consumers", events) != 0:
        failures.append("two consumers: an event was handled by both while nothing crashed")
finally:
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()
    as_postgres(f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    shutil.rmtree(root, ignore_errors=True)

if failures:
    sys.exit("FAILED: " + "; ".join(failures))
print("ok: every committed event delivered at least once, every effect applied exactly once")
