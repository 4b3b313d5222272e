#!/usr/bin/env python3
"""Two Ghost instances on one PostgreSQL, checked as a user would see them.

Starts a PostgreSQL cluster of its own (in a temporary directory, as `nobody` when run as root, since PostgreSQL
refuses root), then two `ghost` processes on different ports with the same --database-url. Opens
ghost://dashboard/weather/city?name=Oslo on A and waits up to 1 s for B's dashboard to show Oslo; revokes `weather`
on A's Settings and waits up to 1 s for B's dashboard to lose the weather widget; grants it back. Prints how long
each took, and exits non-zero when either missed its second. Everything it starts is stopped at the end.

    python3 Scripts/two-instances.py .build/debug/ghost
"""
import glob, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.parse, urllib.request

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
if not binaries or not os.path.exists(ghost):
    sys.exit(f"needs PostgreSQL (apt-get install postgresql) and {ghost} (swift build --product ghost)")
bin_dir = binaries[0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(*command):
    prefix = ["runuser", "-u", "nobody", "--"] if os.getuid() == 0 else []
    subprocess.run(prefix + list(command), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/tmp")


def get(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def post(base, path, fields):
    token = re.search(r'name="csrf" value="([^"]+)"', get(base + "/settings")).group(1)
    body = urllib.parse.urlencode({"csrf": token, **fields}).encode()
    request = urllib.request.Request(base + path, data=body, headers={"Origin": base})
    try:
        urllib.request.urlopen(request, timeout=5).read()
    except urllib.error.HTTPError as error:
        if error.code != 303:
            raise


def within_a_second(what, condition):
    started = time.monotonic()
    while time.monotonic() - started < 1.0:
        if condition():
            took = (time.monotonic() - started) * 1000
            print(f"ok: {what} in {took:.0f} ms")
            return True
        time.sleep(0.02)
    print(f"FAILED: {what} not within 1 s")
    return False


root = tempfile.mkdtemp(prefix="mosaic-two-")
os.chmod(root, 0o777)
data, pg_port = os.path.join(root, "pg"), free_port()
processes, ok = [], False
try:
    as_postgres(f"{bin_dir}/initdb", "-D", data, "-U", "ghost", "-A", "trust", "--no-sync")
    as_postgres(f"{bin_dir}/pg_ctl", "-D", data, "-l", os.path.join(root, "pg.log"), "-w", "-o",
                f"-F -p {pg_port} -k {root} -c listen_addresses=127.0.0.1", "start")
    as_postgres(f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(pg_port), "-U", "ghost", "ghost")
    url = f"postgres://ghost@127.0.0.1:{pg_port}/ghost?sslmode=disable"
    bases = []
    for name in "ab":
        port, admin = free_port(), free_port()
        log = open(os.path.join(root, f"{name}.log"), "w")
        processes.append(subprocess.Popen(
            [ghost, "--port", str(port), "--admin-port", str(admin), "--database-url", url,
             "--data-directory", os.path.join(root, name)], stdout=log, stderr=subprocess.STDOUT))
        for _ in range(300):
            try:
                if get(f"http://127.0.0.1:{admin}/health/ready").startswith("ready"):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError(f"ghost {name} did not become ready")
        bases.append(f"http://127.0.0.1:{port}")
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
finally:
    for process in processes:
        process.terminate()
        process.wait(timeout=30)
    if os.path.exists(data):
        as_postgres(f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    if not ok:
        for log in sorted(glob.glob(os.path.join(root, "*.log"))):
            print(f"--- {log}", open(log).read()[-3000:], sep="\n")
    shutil.rmtree(root, ignore_errors=True)
sys.exit(0 if ok else 1)
