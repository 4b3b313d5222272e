#!/usr/bin/env python3
"""A Ghost server under 600 connections that send request bodies too slowly, checked from outside.

Starts one `ghost` (memory and files, no database), then twice opens 600 connections that each announce a 16 KB body
and send one byte of it:
1. all from one client address (127.0.0.1): the client's 128 places fill, and then
   - a normal client at another address (127.0.0.2) gets `/dashboard` (200);
   - another connection from the slow client's address is answered 503;
2. from ten addresses (127.0.0.10-19, 60 each): the server's 512 places fill, and then
   - a client at a new address is answered 503 instead of waiting in the backlog;
   - once the slow bodies are answered 408 (5 s of grace at less than 240 bytes/s), a normal client gets 200.
3. as deployed, against the public and the admin port at once: from 127.0.0.1, 600 connections that open a live
   stream (`/live`) and never read it, and from 127.0.0.3, 600 that send a body slowly: one client's live streams
   stop at its 16 and its connections at its 128, so a normal client at 127.0.0.2 is never refused, and the median
   of its requests stays within twice its median before (each port's own; an absolute 10 ms is allowed besides, a
   few scheduler slices on two shared cores).
"At once" is checked by order, not by a time limit a loaded machine could miss: each of those answers must come
before any slow body holding a place has been answered 408, so none waited for the grace period. Every slow
connection must have been answered (503 at once, or 408 after the grace period). Prints the figures, exits
non-zero when a check fails. Everything it starts is stopped at the end.

    python3 Scripts/slow-clients.py .build/debug/ghost
"""
import os, resource, select, shutil, socket, sys, tempfile, time
from pgcluster import start_ghost

ghost = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/ghost"
if not os.path.exists(ghost):
    sys.exit(f"needs {ghost} (swift build --product ghost)")
SLOW = 600
# 600 client sockets here, as many on the server's side.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def slow_body(port, source):
    """A connection from `source` that announces a 16 KB body and sends one byte of it."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    connection.sendall(b"POST /open HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded"
                       b"\r\nContent-Length: 16384\r\n\r\nc")
    return connection


def answer(connection):
    """The status of what the server sent on `connection` until it closed it (or 30 s passed), or None."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except OSError:
        pass
    connection.close()
    return int(received.split(b" ")[1]) if received.startswith(b"HTTP/1.1 ") else None


def request(port, source):
    """GET /dashboard from `source`: its status (None when nothing came) and how long the answer took."""
    started = time.monotonic()
    connection = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    connection.sendall(b"GET /dashboard HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    return answer(connection), time.monotonic() - started


def timed_out(connections):
    """How many of `connections` the server has answered 408 so far (read without taking it)."""
    poll = select.poll()
    for connection in connections:
        poll.register(connection, select.POLLIN)
    ready = {descriptor for descriptor, _ in poll.poll(0)}
    return sum(1 for connection in connections if connection.fileno() in ready and peek(connection) == b"HTTP/1.1 408")


def peek(connection):
    """The first 12 bytes the server sent on `connection`, left unread; empty when the connection was reset."""
    try:
        return connection.recv(12, socket.MSG_PEEK)
    except OSError:
        return b""


failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def answered(connections):
    """How many of `connections` were answered with each status."""
    statuses = {}
    for connection in connections:
        status = answer(connection)
        statuses[status] = statuses.get(status, 0) + 1
    return statuses


root = tempfile.mkdtemp(prefix="mosaic-slow-")
process, base = start_ghost(ghost, "ghost", None, root)
port = int(base.rsplit(":", 1)[1])
try:
    print(f"1. {SLOW} slow bodies from 127.0.0.1")
    slow = [slow_body(port, "127.0.0.1") for _ in range(SLOW)]
    status, seconds = request(port, "127.0.0.2")
    late = timed_out(slow)
    check(status == 200 and late == 0,
          f"a client at 127.0.0.2 gets /dashboard before any slow body's 408: {status} in {seconds:.3f} s, "
          f"{late} answered 408")
    status, seconds = request(port, "127.0.0.1")
    late = timed_out(slow)
    check(status == 503 and late == 0,
          f"another connection from 127.0.0.1 is refused before any 408: {status} in {seconds:.3f} s, "
          f"{late} answered 408")
    statuses = answered(slow)
    check(statuses == {503: SLOW - 128, 408: 128}, f"the slow connections were answered: {statuses}")

    print(f"2. {SLOW} slow bodies from 127.0.0.10-19")
    slow = [slow_body(port, f"127.0.0.{10 + index % 10}") for index in range(SLOW)]
    status, seconds = request(port, "127.0.0.50")
    late = timed_out(slow)
    check(status == 503 and late == 0,
          f"a client at 127.0.0.50 is refused at once, before any slow body's 408: {status} in {seconds:.3f} s, "
          f"{late} answered 408")
    statuses = answered(slow)
    check(statuses == {503: SLOW - 512, 408: 512}, f"the slow connections were answered: {statuses}")
    status, seconds = request(port, "127.0.0.50")
    check(status == 200, f"then a client at 127.0.0.50 gets /dashboard: {status} in {seconds:.3f} s")

    print(f"3. {SLOW} live streams and {SLOW} slow bodies on each port, from 127.0.0.1 and 127.0.0.3")
    admin = int(process.admin.rsplit(":", 1)[1])
    paths = {port: "/dashboard", admin: "/health/ready"}

    def median_latency(target):
        """The median time of 21 requests from 127.0.0.2 to `target`, and every status they got."""
        times, statuses = [], set()
        for _ in range(21):
            started = time.monotonic()
            connection = socket.create_connection(("127.0.0.1", target), timeout=10, source_address=("127.0.0.2", 0))
            connection.sendall(f"GET {paths[target]} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                               .encode())
            statuses.add(answer(connection))
            times.append(time.monotonic() - started)
        return sorted(times)[len(times) // 2], statuses

    def live_stream(target):
        connection = socket.create_connection(("127.0.0.1", target), timeout=30, source_address=("127.0.0.1", 0))
        connection.sendall(b"GET /live?page=/dashboard HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return connection

    before = {target: median_latency(target) for target in paths}
    held = []
    for target in paths:
        held += [live_stream(target) for _ in range(SLOW)]
        held += [slow_body(target, "127.0.0.3") for _ in range(SLOW)]
    during = {target: median_latency(target) for target in paths}
    for target, name in ((port, "public"), (admin, "admin")):
        (was, _), (now, statuses) = before[target], during[target]
        check(statuses == {200} and now <= max(2 * was, was + 0.010),
              f"{name} port, {paths[target]} from 127.0.0.2 with {2 * SLOW} held connections: {statuses}, "
              f"median {now * 1000:.1f} ms against {was * 1000:.1f} ms before")
    streams = [connection for connection in held[:SLOW]]
    opened = sum(1 for connection in streams if peek(connection) == b"HTTP/1.1 200")
    check(opened == 16, f"one client's live streams on the public port stop at 16: {opened} of {SLOW} opened")
    for connection in held:
        connection.close()
finally:
    process.terminate()
    process.wait(timeout=30)
    if failures:
        print(open(os.path.join(root, "ghost.log")).read()[-3000:])
    shutil.rmtree(root, ignore_errors=True)
sys.exit(1 if failures else 0)
