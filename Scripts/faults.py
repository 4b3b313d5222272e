#!/usr/bin/env python3
"""Two Ghost instances on one PostgreSQL under load while faults are injected, checked for invariants, not timings.

Starts a PostgreSQL cluster of its own and two `ghost` instances (A and B) on it, then opens city links on both,
alternately and without pause, for the whole run: each link that is acknowledged (200, handled) committed the
favourite city and one durable FeatureOpened event in one transaction, which Analytics counts once (its count commits
with the event's delivery, in its handler's transaction). Meanwhile each
fault below is injected RUNS times (2 unless set in the environment), while both instances' Modules pages are sampled:

- kill -9 of B under load (its handler mid-batch, most likely), then B started again;
- pg_terminate_backend of every listening connection, then of every pooled one;
- SIGSTOP of B's listening backend while A revokes `art`: from the bound on (three heartbeats, 15 s), B must have
  art switched off, or say it is not ready;
- SIGSTOP of A's pooled backends for three storage time limits under load;
- PostgreSQL restarted, fast and immediate;
- PostgreSQL stopped: both instances must say they are not ready within the bound, and ready again after it starts;
- `mosaic_policy` locked while every listening connection is terminated (each instance reads the policy again).

Invariants, checked throughout and at the end once the outbox has drained:
- no module blocked or failed by an outage (the Modules pages, sampled every half second);
- no link answered 500 (an outage answers 503);
- no acknowledged write lost: at least as many FeatureOpened events stored as links acknowledged;
- no committed event lost: every stored event delivered, and Analytics' count equal to the events stored;
- a revoke on one instance enforced on the other within the bound, or that instance not ready;
- readiness that matches the database: not ready while it is down, ready once it is back.
Prints a table (fault, runs, violations), the links' outcomes and the redeliveries (attempts after the first, whose
transactions found the count committed or committed it once); exits non-zero on any violation. Everything it starts
is stopped.

    python3 Scripts/faults.py .build/debug/ghost
"""
import json, os, re, signal, subprocess, sys, threading, time, urllib.error, urllib.parse, urllib.request
from pgcluster import OPERATOR_KEY, Cluster, get, start_ghost

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
if not os.path.exists(ghost):
    sys.exit(f"needs {ghost} (swift build --product ghost)")
RUNS = int(os.environ.get("RUNS", "2"))
BOUND = 15  # three heartbeats of 5 s: PostgresBackend's bound on how stale an instance may be while ready
STORAGE = 2  # --storage-time-limit


class Instance:
    """A ghost process: its public and admin URLs, and the CSRF token of its pages."""

    def __init__(self, name, url, root):
        self.name, self.url, self.root = name, url, root
        self.start()

    def start(self):
        self.process, self.base = start_ghost(ghost, self.name, self.url, self.root,
                                              "--storage-time-limit", str(STORAGE))
        arguments = self.process.args
        self.admin = f"http://127.0.0.1:{arguments[arguments.index('--admin-port') + 1]}"
        self.token = re.search(r'name="csrf" value="([^"]+)"', get(self.base + "/settings")).group(1)

    def post(self, path, fields, timeout=10):
        """POSTs a form; the status and body (None, None when nothing answered)."""
        body = urllib.parse.urlencode({"csrf": self.token, "operator_key": OPERATOR_KEY, **fields}).encode()
        request = urllib.request.Request(self.base + path, data=body, headers={"Origin": self.base})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")
        except OSError:
            return None, None

    def states(self):
        """Each module's state on the Modules page; None when the page does not answer."""
        try:
            page = get(self.base + "/modules", timeout=5)
        except OSError:
            return None
        return dict(re.findall(r'data-module="([^"]+)" data-state="([^"]+)"', page))

    def ready(self):
        try:
            with urllib.request.urlopen(self.admin + "/health/ready", timeout=5) as response:
                return response.status == 200
        except (urllib.error.HTTPError, OSError):
            return False

    def backends(self):
        """The PostgreSQL backends serving this process: (pid, listening) for each."""
        inodes = set()
        for fd in os.listdir(f"/proc/{self.process.pid}/fd"):
            try:
                link = os.readlink(f"/proc/{self.process.pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        ports = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in open(table).read().splitlines()[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].split(":")[1], 16))
        if not ports:
            return []
        rows = sql("SELECT pid, regexp_replace(left(query, 40), '\\s+', ' ', 'g') FROM pg_stat_activity "
                   f"WHERE client_port IN ({','.join(map(str, ports))})")
        # The listening connection's last query is its LISTEN or its heartbeat, `SELECT 1`; the pool never sends
        # that (its probe records the instance as seen).
        return [(int(pid), query.startswith("LISTEN") or query == "SELECT 1") for pid, query in rows]


def psql(statement):
    """The command that runs `statement` with psql on the cluster's database, rows as tab-separated fields."""
    return [f"{cluster.bin_dir}/psql", "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "ghost", "-d", "ghost",
            "-At", "-F", "\t", "-c", statement]


def sql(statement):
    """Runs `statement` with psql; the rows, each a list of fields."""
    result = subprocess.run(psql(statement), capture_output=True, text=True, timeout=60)
    return [line.split("\t") for line in result.stdout.splitlines() if line]


violations = {}  # fault -> messages
current = ["start"]


def violation(message):
    violations.setdefault(current[0], []).append(message)
    print(f"  VIOLATION ({current[0]}): {message}")


def wait_until(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


class Load(threading.Thread):
    """Opens city links on both instances in turn until stopped; counts how each was answered."""

    def __init__(self, instances):
        super().__init__(daemon=True)
        self.instances, self.running, self.outcomes = instances, True, {}

    def run(self):
        number = 0
        while self.running:
            instance = self.instances[number % 2]
            city = ["Oslo", "Lisbon", "Chicago"][number % 3]
            status, body = instance.post("/open", {"url": f"ghost://dashboard/weather/city?name={city}"})
            outcome = "acknowledged" if status == 200 and "handled by com.ghost.weather" in body else str(status)
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            if status == 500:
                violation(f"a link on {instance.name} answered 500")
            if status is None:
                time.sleep(0.1)  # the instance is down: do not spin
            number += 1


class Watch(threading.Thread):
    """Samples both instances' Modules pages: no module may be blocked or failed, but those the harness revoked."""

    def __init__(self, instances):
        super().__init__(daemon=True)
        self.instances, self.running, self.revoked = instances, True, set()

    def run(self):
        while self.running:
            for instance in self.instances:
                for module, state in (instance.states() or {}).items():
                    if state in ("blocked", "failed") and module not in self.revoked:
                        violation(f"{module} is {state} on {instance.name}")
            time.sleep(0.5)


def readiness(instance):
    """What the instance's admin port says of its readiness."""
    try:
        return get(instance.admin + "/health/ready").strip()
    except urllib.error.HTTPError as error:
        return error.read().decode(errors="replace").strip()
    except OSError as error:
        return str(error)


def both_ready(seconds=60):
    if not wait_until(lambda: all(instance.ready() for instance in instances), seconds):
        said = "; ".join(f"{instance.name}: {readiness(instance)}" for instance in instances)
        violation(f"an instance did not say it was ready again after the fault ({said})")


def kill_b():
    b = instances[1]
    b.process.send_signal(signal.SIGKILL)
    b.process.wait()
    time.sleep(1)
    b.start()


def terminate(listening):
    def fault():
        for instance in instances:
            for pid, is_listener in instance.backends():
                if is_listener == listening:
                    sql(f"SELECT pg_terminate_backend({pid})")
        time.sleep(2)
    return fault


def stop_listener_while_revoking():
    a, b = instances
    listeners = [pid for pid, listening in b.backends() if listening]
    watch.revoked.add("com.ghost.art")
    for pid in listeners:
        os.kill(pid, signal.SIGSTOP)
    try:
        a.post("/settings/entitlements", {"entitlement": "art", "action": "revoke"})
        started = time.monotonic()
        while time.monotonic() - started < BOUND + 5:
            elapsed = time.monotonic() - started
            state = (b.states() or {}).get("com.ghost.art")
            if elapsed > BOUND + 1 and state not in ("blocked", "deactivated", None) and b.ready():
                violation(f"B still runs art ({state}) and says it is ready {elapsed:.0f} s after the revoke on A")
                break
            time.sleep(0.5)
    finally:
        for pid in listeners:
            os.kill(pid, signal.SIGCONT)
    a.post("/settings/entitlements", {"entitlement": "art", "action": "grant"})
    if not wait_until(lambda: (b.states() or {}).get("com.ghost.art") in ("active", "standby"), BOUND + 5):
        violation("B did not take art back after the grant on A")
    watch.revoked.discard("com.ghost.art")


def stop_pool_backends():
    pool = [pid for pid, listening in instances[0].backends() if not listening]
    for pid in pool:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(3 * STORAGE)
    for pid in pool:
        os.kill(pid, signal.SIGCONT)


def restart(mode):
    def fault():
        cluster.stop_server(mode)
        cluster.start_server()
    return fault


def stop_database():
    cluster.stop_server("fast")
    try:
        if not wait_until(lambda: not any(instance.ready() for instance in instances), BOUND + 5):
            violation("an instance said it was ready while the database was stopped")
    finally:
        cluster.start_server()
    if not wait_until(lambda: all(instance.ready() for instance in instances), BOUND + 15):
        violation("an instance did not say it was ready once the database was back")


def lock_policy():
    holder = subprocess.Popen(
        psql(f"BEGIN; LOCK TABLE mosaic_policy IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({4 * STORAGE}); COMMIT;"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    terminate(listening=True)()
    holder.wait(timeout=60)


FAULTS = [
    ("kill -9 of an instance under load", kill_b),
    ("pg_terminate_backend, listening connections", terminate(listening=True)),
    ("pg_terminate_backend, pooled connections", terminate(listening=False)),
    ("SIGSTOP of the listening backend during a revoke", stop_listener_while_revoking),
    ("SIGSTOP of the pooled backends under load", stop_pool_backends),
    ("PostgreSQL restarted (fast)", restart("fast")),
    ("PostgreSQL restarted (immediate)", restart("immediate")),
    ("PostgreSQL stopped: readiness", stop_database),
    ("mosaic_policy locked while policy is read again", lock_policy),
]

cluster = Cluster("mosaic-faults-")
instances, ok = [], False
try:
    url = cluster.start()
    instances = [Instance("a", url, cluster.root), Instance("b", url, cluster.root)]
    load, watch = Load(instances), Watch(instances)
    load.start()
    watch.start()
    time.sleep(2)
    rows = []
    for name, fault in FAULTS:
        current[0] = name
        for run in range(RUNS):
            print(f"{name}, run {run + 1} (links acknowledged so far: {load.outcomes.get('acknowledged', 0)})")
            fault()
            both_ready()
            time.sleep(1)
        rows.append((name, RUNS))
    current[0] = "after the faults"
    load.running = False
    load.join()
    time.sleep(1)
    watch.running = False
    watch.join()
    acknowledged = load.outcomes.get("acknowledged", 0)
    drained = wait_until(lambda: sql("SELECT count(*) FROM mosaic_delivery WHERE state <> 'done'") == [["0"]], 120)
    stored = int(sql("SELECT count(*) FROM mosaic_event WHERE event_type = 'ghost.feature-opened'")[0][0])
    usage = sql("SELECT value FROM mosaic_state WHERE id = 'ghost.usage'")
    counted = sum(json.loads(usage[0][0]).values()) if usage else 0
    redelivered = int(sql("SELECT count(*) FROM mosaic_delivery WHERE attempts > 1")[0][0])
    left = sql("SELECT state, count(*) FROM mosaic_delivery WHERE state <> 'done' GROUP BY state")
    if stored < acknowledged:
        violation(f"{acknowledged} links acknowledged, only {stored} events stored")
    if not drained:
        violation(f"deliveries not done 120 s after the load stopped: {left}")
    if counted != stored:
        violation(f"Analytics counted {counted} openings of {stored} events stored")
    print()
    print("| fault | runs | invariant violations |")
    print("|---|---:|---:|")
    for name, runs in rows + [("after the faults (drain, counts)", 1)]:
        key = name if name in dict(FAULTS) else "after the faults"
        print(f"| {name} | {runs} | {len(violations.get(key, []))} |")
    print()
    print(f"links: {dict(sorted(load.outcomes.items()))}; events stored {stored}, counted {counted}; "
          f"deliveries attempted more than once (each counted once) {redelivered}")
    ok = not violations
finally:
    for instance in instances:
        instance.process.terminate()
        instance.process.wait(timeout=30)
    cluster.stop(show_logs=not ok)
sys.exit(0 if ok else 1)
