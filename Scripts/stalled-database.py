#!/usr/bin/env python3
"""A Ghost instance whose PostgreSQL database stops answering, checked from outside.

Starts a PostgreSQL cluster of its own (as `nobody` when run as root) and one `ghost` on it with a storage time limit
of 2 s. Then, twice, it sends 20 concurrent link POSTs (each writes the favourite city) while timing `/dashboard` and
`/health/live` in a loop: once with the database answering (the baseline), once with every process of the cluster
stopped by SIGSTOP (the postmaster too, so that no new connection gets past it either). It checks that
- during the stall every link POST answers 503 with Retry-After, no later than the time limit and a margin;
- the p99 of `/dashboard` and `/health/live` during the stall stays within 3x the baseline's (at least 10 ms);
- once the database answers again (SIGCONT), a link POST succeeds and the dashboard shows its city.
Then a second `ghost`, on whose pages nothing was rendered (Art waits on standby), with the cluster stopped again:
- a revoke and a grant (POST /settings/entitlements, with the operator key) each answer within the time limit and
  a second, and meanwhile /art starts Art on demand, answering before either;
- SIGTERM ends it within the time limit and a second.
Prints the figures, exits non-zero when a check fails. Everything it starts is stopped at the end.

    python3 Scripts/stalled-database.py .build/debug/ghost
"""
import os, re, signal, subprocess, sys, threading, time
import urllib.error, urllib.parse, urllib.request
from pgcluster import OPERATOR_KEY, Cluster, get, start_ghost

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
if not os.path.exists(ghost):
    sys.exit(f"needs {ghost} (swift build --product ghost)")
TIME_LIMIT = 2.0
WRITERS = 20


def open_link(base, token, city):
    """POSTs a city link; returns (status, Retry-After, seconds taken)."""
    url = f"ghost://dashboard/weather/city?name={city}"
    body = urllib.parse.urlencode({"csrf": token, "url": url}).encode()
    request = urllib.request.Request(base + "/open", data=body, headers={"Origin": base})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status, response.headers.get("Retry-After"), time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Retry-After"), time.monotonic() - started


def timed(request):
    """Sends `request`; returns (status, seconds taken, the time.monotonic() it answered at, body)."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as error:
        status, body = error.code, ""
    return status, time.monotonic() - started, time.monotonic(), body


def change_entitlement(base, token, action):
    body = urllib.parse.urlencode({"csrf": token, "entitlement": "weather", "action": action}).encode()
    return timed(urllib.request.Request(
        base + "/settings/entitlements", data=body,
        headers={"Origin": base, "Authorization": f"bearer {OPERATOR_KEY}"}))


def operations_while_stalled(cluster, url):
    """The second instance's checks; whether they passed."""
    process, base = start_ghost(ghost, "ghost-operations", url, cluster.root, "--storage-time-limit",
                                str(int(TIME_LIMIT)))
    token = re.search(r'name="csrf" value="([^"]+)"', get(base + "/settings")).group(1)
    stopped, passed = cluster.pids(), True
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        results = {}
        calls = {"revoke": lambda: change_entitlement(base, token, "revoke"),
                 "grant": lambda: change_entitlement(base, token, "grant"),
                 "/art": lambda: timed(urllib.request.Request(base + "/art"))}
        threads = [threading.Thread(target=lambda name=name, call=call: results.__setitem__(name, call()))
                   for name, call in calls.items()]
        for thread in threads:
            thread.start()
            time.sleep(0.05)  # in this order: the art page is asked for while both changes wait
        for thread in threads:
            thread.join()
        for name in ("revoke", "grant"):
            status, seconds, _, _ = results[name]
            ok = seconds <= TIME_LIMIT + 1
            print(f"{'ok' if ok else 'FAILED'}: with the database stopped, a {name} answered {status} after "
                  f"{seconds * 1000:.0f} ms (allowed {(TIME_LIMIT + 1) * 1000:.0f} ms)")
            passed &= ok
        status, seconds, at, body = results["/art"]
        first = min(results["revoke"][2], results["grant"][2])
        listed = "Katsushika Hokusai" in body
        ok = status == 200 and listed and at < first
        print(f"{'ok' if ok else 'FAILED'}: meanwhile /art answered {status} after {seconds * 1000:.0f} ms, "
              f"{'before' if at < first else 'after'} the changes answered, Art started on demand "
              f"({'its works listed' if listed else 'its works not listed'})")
        passed &= ok
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
        seconds = time.monotonic() - started
        ok = seconds <= TIME_LIMIT + 1
        print(f"{'ok' if ok else 'FAILED'}: with the database stopped, SIGTERM ended the instance after "
              f"{seconds * 1000:.0f} ms (allowed {(TIME_LIMIT + 1) * 1000:.0f} ms)")
        return passed and ok
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def p99(samples):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def round_of_writes(base, token, cities):
    """20 link POSTs at once, while /dashboard and /health/live are timed in a loop for at least the time limit;
    the POSTs' results and the pages' timings."""
    results, timings, done = [None] * len(cities), {"/dashboard": [], "/health/live": []}, threading.Event()

    def write(index):
        results[index] = open_link(base, token, cities[index])

    def time_pages():
        while not done.is_set():
            for path in timings:
                started = time.monotonic()
                get(base + path)
                timings[path].append(time.monotonic() - started)

    started = time.monotonic()
    pages = threading.Thread(target=time_pages)
    pages.start()
    writers = [threading.Thread(target=write, args=(i,)) for i in range(len(cities))]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    time.sleep(max(0, TIME_LIMIT - (time.monotonic() - started)))
    done.set()
    pages.join()
    return results, timings


cluster = Cluster("mosaic-stall-")
process, stopped, ok = None, [], True
try:
    url = cluster.start()
    process, base = start_ghost(ghost, "ghost", url, cluster.root, "--storage-time-limit", str(int(TIME_LIMIT)))
    token = re.search(r'name="csrf" value="([^"]+)"', get(base + "/settings")).group(1)

    baseline, base_timings = round_of_writes(base, token, ["Oslo"] * WRITERS)
    print(f"baseline: {WRITERS} link POSTs answered {sorted(set(r[0] for r in baseline))}, "
          f"slowest {max(r[2] for r in baseline) * 1000:.0f} ms")

    stopped = cluster.pids()
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    stalled, stall_timings = round_of_writes(base, token, ["Lisbon"] * WRITERS)
    for pid in stopped:
        os.kill(pid, signal.SIGCONT)
    stopped = []

    statuses = sorted(set(r[0] for r in stalled))
    slowest = max(r[2] for r in stalled)
    print(f"stalled: {WRITERS} link POSTs answered {statuses}, slowest {slowest * 1000:.0f} ms "
          f"(time limit {TIME_LIMIT:.0f} s)")
    if statuses != [503] or any(r[1] is None for r in stalled):
        print("FAILED: every link POST during the stall must answer 503 with Retry-After")
        ok = False
    if slowest > TIME_LIMIT + 3:
        print("FAILED: a link POST waited well past the storage time limit")
        ok = False
    for path in base_timings:
        before, during = p99(base_timings[path]) * 1000, p99(stall_timings[path]) * 1000
        allowed = 3 * max(before, 10)
        verdict = "ok" if during <= allowed else "FAILED"
        print(f"{verdict}: {path} p99 {during:.1f} ms during the stall ({len(stall_timings[path])} requests), "
              f"{before:.1f} ms without ({len(base_timings[path])} requests); allowed {allowed:.1f} ms")
        ok &= during <= allowed

    for _ in range(100):
        status, _, _ = open_link(base, token, "Tokyo")
        if status in (200, 303):
            break
        time.sleep(0.1)
    recovered = status in (200, 303) and "Tokyo" in get(base + "/dashboard")
    print(f"{'ok' if recovered else 'FAILED'}: after the stall a link POST answered {status} and the dashboard "
          f"{'shows' if recovered else 'does not show'} its city")
    ok &= recovered
    ok &= operations_while_stalled(cluster, url)
finally:
    for pid in stopped:
        os.kill(pid, signal.SIGCONT)
    if process:
        process.terminate()
        process.wait(timeout=30)
    cluster.stop(show_logs=not ok)
sys.exit(0 if ok else 1)
