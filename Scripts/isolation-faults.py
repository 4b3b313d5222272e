#!/usr/bin/env python3
"""Ghost's isolated module (Art, in a process of its own) killed and stopped, checked from outside.

Starts one `ghost` (on its data directory alone). First `ghost bisect` looks for the module behind a check that fails
while Art is active, on the running app through its admin port. Then, while a probe fetches the Weather page every
50 ms, it ends Art's process four times within the restart window: SIGKILL, SIGSTOP (the host finds it by its missed
heartbeat), SIGKILL, SIGKILL. It checks that
- bisect names com.ghost.art within ceil(log2 7) + 1 = 4 checks, and leaves every module as it was;
- the Weather page answers 200 throughout, and the dashboard answers 200 after every fault;
- after each of the first three, Art comes back on the dashboard in a new process;
- after the fourth, Art stays failed (the budget: 3 restarts in 5 minutes), and the dashboard still answers;
- Ghost then stops cleanly on SIGTERM, leaving no process of Art's behind.
First, `--isolate` naming no module of Ghost's is refused by name. Prints each step, exits non-zero when a check
fails. Everything it starts is stopped at the end.

    python3 Scripts/isolation-faults.py .build/debug/ghost
"""
import os, re, signal, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.request
from pgcluster import get, start_ghost

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
if not os.path.exists(ghost):
    sys.exit(f"needs {ghost} (swift build --product ghost)")
ART = "com.ghost.art"


def status(url, timeout=30):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def art_row(base):
    """Art's state and process id on /modules (None when no process runs it)."""
    row = re.search(r'<tr data-module="' + re.escape(ART) + r'" data-state="([a-z]+)">.*?</tr>', get(base + "/modules"))
    process = re.search(r"data-process>process (\d+)", row.group(0))
    return row.group(1), int(process.group(1)) if process else None


def wait_for(what, check, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def serving_art(base):
    """Loads the dashboard (which starts Art when it waits on standby) until Art's widget is on it; Art's pid."""
    def check():
        code, page = status(base + "/dashboard")
        state, pid = art_row(base)
        return pid if code == 200 and f'data-module="{ART}"' in page and state == "active" else None
    return wait_for("Art back on the dashboard", check)


root = tempfile.mkdtemp(prefix="mosaic-isolation-")
process, ok, failures = None, True, []
try:
    # A misspelt module to isolate is refused by name before anything runs, never run in process unsaid.
    misspelt = subprocess.run([ghost, "--isolate", "com.ghost.artt", "--check", "--data-directory", root],
                              capture_output=True, text=True, timeout=120)
    if misspelt.returncode == 0 or "--isolate names com.ghost.artt" not in misspelt.stderr:
        failures.append(f"--isolate com.ghost.artt was not refused by name (exit {misspelt.returncode}): "
                        f"{misspelt.stderr.strip()[-300:]}")
    process, base = start_ghost(ghost, "ghost", None, root)
    stop, probes = threading.Event(), []

    def probe():
        while not stop.is_set():
            probes.append(status(base + "/weather", timeout=10)[0])
            time.sleep(0.05)

    serving_art(base)
    before = re.findall(r'<tr data-module="([a-z.]+)" data-state="([a-z]+)">', get(base + "/modules"))
    check = f"! curl -fs {base}/modules | grep -q 'data-module=\"{ART}\" data-state=\"active\"'"
    bisect = subprocess.run(
        [ghost, "bisect", "--admin", process.admin, "--operator-key-file", os.path.join(root, "operator.key"),
         "--check", check], capture_output=True, text=True, timeout=120)
    print(bisect.stdout.strip())
    steps = len(re.findall(r"^  \d+\. held off", bisect.stdout, re.MULTILINE))
    if bisect.returncode != 0 or f"fails with {ART} active" not in bisect.stdout or steps > 4:
        failures.append(f"bisect did not name {ART} in at most 4 checks (exit {bisect.returncode}): {bisect.stderr}")
    after = re.findall(r'<tr data-module="([a-z.]+)" data-state="([a-z]+)">', get(base + "/modules"))
    if after != before:
        failures.append(f"bisect left the modules {after}, not as they were: {before}")
    pid = serving_art(base)
    print(f"Art serves from process {pid}")
    prober = threading.Thread(target=probe)
    prober.start()
    for number, fault in enumerate([signal.SIGKILL, signal.SIGSTOP, signal.SIGKILL, signal.SIGKILL], start=1):
        os.kill(pid, fault)
        wait_for(f"Art failed after {fault.name}", lambda: art_row(base)[0] == "failed" or art_row(base)[1] != pid,
                 seconds=30)
        code, _ = status(base + "/dashboard")
        if code != 200:
            failures.append(f"the dashboard answered {code} after {fault.name}")
        if number < 4:
            new = serving_art(base)
            print(f"{fault.name}: Art failed, then came back in process {new}")
            if new == pid:
                failures.append(f"Art came back in the same process after {fault.name}")
            pid = new
    # The fourth crash in the window: no restart, however long one waits past the last backoff (4 s).
    time.sleep(6)
    state, left = art_row(base)
    code, page = status(base + "/dashboard")
    print(f"after the fourth crash: Art is {state}, the dashboard answers {code}")
    if state != "failed" or left is not None:
        failures.append(f"Art is {state} (process {left}) after a fourth crash in the window, not failed")
    if code != 200 or f'data-module="{ART}"' in page:
        failures.append("the dashboard does not answer without Art after its fourth crash")
    stop.set()
    prober.join()
    bad = [code for code in probes if code != 200]
    print(f"the Weather page answered {len(probes) - len(bad)} of {len(probes)} probes with 200")
    if bad or not probes:
        failures.append(f"the Weather page answered {sorted(set(bad))} to {len(bad)} probes")
    process.send_signal(signal.SIGTERM)
    if process.wait(timeout=30) != 0:
        failures.append(f"ghost exited {process.returncode} on SIGTERM")
    try:
        os.kill(pid, 0)
        failures.append(f"Art's process {pid} outlived ghost")
    except ProcessLookupError:
        pass
except Exception as error:
    failures.append(f"{type(error).__name__}: {error}")
finally:
    if process and process.poll() is None:
        process.kill()
        process.wait()
for failure in failures:
    print("FAILED:", failure)
if failures:
    print(f"the log is in {root}/ghost.log")
    sys.exit(1)
print("isolation faults: every check held")
