#!/usr/bin/env python3
"""Two Ghost instances on one PostgreSQL, checked as a user would see them.

Starts a PostgreSQL cluster of its own (in a temporary directory, as `nobody` when run as root, since PostgreSQL
refuses root), then two `ghost` processes on different ports with the same --database-url. Opens
ghost://dashboard/weather/city?name=Oslo on A and waits up to 1 s for B's dashboard to show Oslo; revokes `weather`
on A's Settings and waits up to 1 s for B's dashboard to lose the weather widget; grants it back. Then opens ten
more city links, alternately on A and B, and checks that Analytics counts each of the eleven once across both
instances (the durable FeatureOpened event, handled by one instance each): B's sidebar badge reaches 11 within 5 s
and never passes it. Prints how long each took, and exits non-zero when a check fails. Everything it starts is
stopped at the end.

    python3 Scripts/two-instances.py .build/debug/ghost
"""
import os, re, sys, time, urllib.parse, urllib.request
from pgcluster import OPERATOR_KEY, Cluster, get, start_ghost

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
if not os.path.exists(ghost):
    sys.exit(f"needs {ghost} (swift build --product ghost)")


def post(base, path, fields):
    token = re.search(r'name="csrf" value="([^"]+)"', get(base + "/settings")).group(1)
    body = urllib.parse.urlencode({"csrf": token, "operator_key": OPERATOR_KEY, **fields}).encode()
    request = urllib.request.Request(base + path, data=body, headers={"Origin": base})
    try:
        urllib.request.urlopen(request, timeout=5).read()
    except urllib.error.HTTPError as error:
        if error.code != 303:
            raise


def within_a_second(what, condition, seconds=1.0):
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if condition():
            took = (time.monotonic() - started) * 1000
            print(f"ok: {what} in {took:.0f} ms")
            return True
        time.sleep(0.02)
    print(f"FAILED: {what} not within {seconds:g} s")
    return False


def opens_counted(base):
    """The Analytics badge in the sidebar: every feature opening counted, or None when there is none."""
    found = re.search(r'data-item="analytics"[^>]*>[^<]*<span class="badge">(\d+)</span>', get(base + "/dashboard"))
    return int(found.group(1)) if found else None


cluster = Cluster("mosaic-two-")
processes, ok = [], False
try:
    url = cluster.start()
    bases = []
    for name in "ab":
        process, base = start_ghost(ghost, name, url, cluster.root)
        processes.append(process)
        bases.append(base)
    a, b = bases
    dashboard = lambda: get(b + "/dashboard")
    post(a, "/open", {"url": "ghost://dashboard/weather/city?name=Oslo"})
    ok = within_a_second("B's dashboard shows Oslo after the link opened on A", lambda: "Oslo" in dashboard())
    post(a, "/settings/entitlements", {"entitlement": "weather", "action": "revoke"})
    ok &= within_a_second("B's dashboard lost the weather widget after the revoke on A",
                          lambda: 'data-module="com.ghost.weather"' not in dashboard())
    post(a, "/settings/entitlements", {"entitlement": "weather", "action": "grant"})
    ok &= within_a_second("B's dashboard has the weather widget again after the grant on A",
                          lambda: 'data-module="com.ghost.weather"' in dashboard())
    for number, city in enumerate(["Lisbon", "Oslo"] * 5):
        post(bases[number % 2], "/open", {"url": f"ghost://dashboard/weather/city?name={city}"})
    ok &= within_a_second("Analytics counted the 11 openings on A and B", lambda: opens_counted(b) == 11, seconds=5)
    counts = set()
    started = time.monotonic()
    while time.monotonic() - started < 1.0:
        counts.add(opens_counted(b))
        time.sleep(0.05)
    if counts != {11}:
        print(f"FAILED: the count of openings moved after reaching 11: {sorted(map(str, counts))}")
        ok = False
finally:
    for process in processes:
        process.terminate()
        process.wait(timeout=30)
    cluster.stop(show_logs=not ok)
sys.exit(0 if ok else 1)
