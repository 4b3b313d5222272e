#!/usr/bin/env python3
"""Ghost behind nginx on the same machine, as the docs advise: every state-changing request without the operator key
is refused through the proxy, with it the change is made, and /metrics is not served publicly.

Starts two Ghost processes on loopback (`--allow-host app.example.com`) and an nginx of its own in front of them
(from Debian's packages; a temporary prefix, loopback only), then, through nginx as a client of the proxy:

- Ghost with an operator key: a revoke with the page's token and a matching Origin but no key is refused (403) and
  changes nothing; with a wrong key, 403; with the key (form field, or `Authorization: bearer`), 303 and done;
  `/metrics` is 404 on the public port;
- Ghost with `--unsafe-no-operator-key` (the development opt-in): a revoke through nginx, which adds
  `X-Forwarded-For`, is refused, since a request through a proxy is never local; the same revoke sent to Ghost
  directly is taken.

Exits non-zero on any failed check. Everything it starts is stopped.

    python3 Scripts/behind-proxy.py .build/debug/ghost
"""
import os, re, shutil, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request
from pgcluster import OPERATOR_KEY, free_port, get, start_ghost

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
nginx = shutil.which("nginx") or "/usr/sbin/nginx"
if not os.path.exists(ghost):
    sys.exit(f"needs {ghost} (swift build --product ghost)")
if not os.path.exists(nginx):
    sys.exit("needs nginx: apt-get install nginx")
NAME = "app.example.com"
failures = []


def check(condition, what):
    print(("ok: " if condition else "FAILED: ") + what)
    if not condition:
        failures.append(what)


def request(base, path, fields=None, headers=None, host=NAME):
    """A GET (or a POST of `fields`); its status and body, following no redirect."""
    data = urllib.parse.urlencode(fields).encode() if fields is not None else None
    sent = urllib.request.Request(base + path, data=data, headers={**({"Host": host} if host else {}), **(headers or {})})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(sent, timeout=10) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def granted(base, entitlement, host=NAME):
    page = request(base, "/settings", host=host)[1]
    match = re.search(rf'data-entitlement="{entitlement}"><td>[^<]*</td><td>(granted|not granted)</td>', page)
    return match.group(1) == "granted" if match else None


root = tempfile.mkdtemp(prefix="mosaic-behind-proxy-")
processes = []
try:
    keyed, keyed_base = start_ghost(ghost, "keyed", None, root, "--allow-host", NAME)
    processes.append(keyed)
    unsafe, unsafe_base = start_ghost(
        ghost, "unsafe", None, root, "--allow-host", NAME, "--unsafe-no-operator-key", keyed=False)
    processes.append(unsafe)
    proxied = {}
    servers = ""
    for name, base in [("keyed", keyed_base), ("unsafe", unsafe_base)]:
        port = free_port()
        proxied[name] = f"http://127.0.0.1:{port}"
        servers += f"""
    server {{
        listen 127.0.0.1:{port};
        server_name {NAME};
        location / {{
            proxy_pass {base};
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}"""
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as file:
        file.write(f"""
daemon off;
pid {root}/nginx.pid;
error_log {root}/nginx-error.log;
{"user nobody nogroup;" if os.getuid() == 0 else ""}
events {{ worker_connections 64; }}
http {{
    access_log {root}/nginx-access.log;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    {servers}
}}
""")
    proxy = subprocess.Popen([nginx, "-p", root, "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    processes.append(proxy)
    for _ in range(100):
        try:
            if request(proxied["keyed"], "/health/live")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)

    base = proxied["keyed"]
    page = request(base, "/settings")[1]
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    origin = {"Origin": f"http://{NAME}"}
    revoke = {"csrf": token, "entitlement": "weather", "action": "revoke"}
    status, body = request(base, "/settings/entitlements", revoke, origin)
    check(status == 403 and "operator key" in body, f"through nginx, a revoke without the key is refused ({status})")
    check(granted(base, "weather") is True, "and weather is still granted")
    status, _ = request(base, "/settings/entitlements", {**revoke, "operator_key": "0" * 64}, origin)
    check(status == 403, f"with a wrong key, refused ({status})")
    status, _ = request(base, "/metrics")
    check(status == 404, f"/metrics is not served on the public port ({status})")
    status, _ = request(base, "/settings/entitlements", {**revoke, "operator_key": OPERATOR_KEY}, origin)
    check(status == 303, f"with the key in the form, the revoke is made ({status})")
    check(granted(base, "weather") is False, "and weather is revoked")
    grant = {"csrf": token, "entitlement": "weather", "action": "grant"}
    status, _ = request(base, "/settings/entitlements", grant, {**origin, "Authorization": f"bearer {OPERATOR_KEY}"})
    check(status == 303 and granted(base, "weather") is True, f"with the key as a bearer token, granted ({status})")

    base = proxied["unsafe"]
    page = request(base, "/settings")[1]
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    revoke = {"csrf": token, "entitlement": "weather", "action": "revoke"}
    status, _ = request(base, "/settings/entitlements", revoke, origin)
    check(status == 403 and granted(base, "weather") is True,
          f"with the development opt-in, a revoke through the proxy is still refused ({status})")
    status, _ = request(unsafe_base, "/settings/entitlements", revoke, {"Origin": unsafe_base}, host=None)
    check(status == 303, f"and the same revoke sent to Ghost directly is taken ({status})")
    check(granted(unsafe_base, "weather", host=None) is False, "and weather is revoked")
finally:
    for process in reversed(processes):
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    if failures:
        for log in sorted(f for f in os.listdir(root) if f.endswith(".log")):
            print(f"--- {log}", open(os.path.join(root, log)).read()[-2000:], sep="\n")
    shutil.rmtree(root, ignore_errors=True)
sys.exit(1 if failures else 0)
