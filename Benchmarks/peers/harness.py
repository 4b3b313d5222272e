"""The shapes of `MosaicBenchmarks durable`, run against a peer job queue through its public API.

A peer module (pgqueuer_peer.py, procrastinate_peer.py, awa_peer.py) gives `install`, `open_publisher` and
`start_consumer`; `run` measures, in the order and with the counts of DurableBenchmark.swift:
- publishing with one publisher (2,000 jobs, a commit each), 16 and 64 publishers at once and batches of 100 (10,000
  each), with no consumer running;
- draining that backlog (32,000 jobs) with one consumer, timed from the consumer's start to the last job's handler
  call; then 10,000 more published in batches of 100 and drained by two consumers;
- enqueue → handler, one job at a time (550, the first 50 left out), and at a fixed offered rate in ticks of 10 ms
  for 3 s, with a floor in the same seconds: a one-row INSERT, committed and synced, every 10 ms on a connection of
  its own.

Latencies are measured within this one process (the job carries the monotonic time of its enqueue). Each row is
printed as `MosaicBenchmarks` prints it, and all of them at the end on one line, `RESULT {json}`, for peers.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
import traceback
from typing import Any, Awaitable, Callable, Protocol

# As MosaicBenchmarks durable; PEERS_EVENTS makes a short trial of the script.
EVENTS = int(os.environ.get("PEERS_EVENTS", "10000"))
ONE_AT_A_TIME = 500
WARM_UP = 50
TICKS = 300
# Generous: the slowest peer drains about 240 jobs/s here, 32,000 take two minutes.
WAIT_LIMIT = 900.0


class Arrivals:
    """Counts handler calls and keeps each one's enqueue → handler time; safe to call from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.thread = threading.get_ident()
        self.count = 0
        self.latencies: list[int] = []
        self.waiters: list[tuple[int, asyncio.Future[None]]] = []

    def arrived(self, sent_at: int) -> None:
        now = time.monotonic_ns()
        if threading.get_ident() == self.thread:
            self._record(now, sent_at)
        else:
            self.loop.call_soon_threadsafe(self._record, now, sent_at)

    def _record(self, now: int, sent_at: int) -> None:
        self.count += 1
        if sent_at:
            self.latencies.append(now - sent_at)
        for target, future in list(self.waiters):
            if self.count >= target and not future.done():
                future.set_result(None)

    async def wait_for(self, count: int) -> None:
        if self.count >= count:
            return
        future: asyncio.Future[None] = self.loop.create_future()
        self.waiters.append((count, future))
        try:
            await asyncio.wait_for(future, WAIT_LIMIT)
        except TimeoutError:
            raise RuntimeError(f"{self.count} of {count} jobs reached the handler in {WAIT_LIMIT:.0f} s") from None
        finally:
            self.waiters = [w for w in self.waiters if w[1] is not future]

    def take(self) -> list[int]:
        taken, self.latencies = self.latencies, []
        return taken


class Publisher(Protocol):
    async def publish(self, order: int, sent_at: int) -> None: ...
    async def publish_many(self, jobs: list[tuple[int, int]]) -> None: ...
    async def close(self) -> None: ...


class Consumer(Protocol):
    async def stop(self) -> None: ...


class Peer(Protocol):
    name: str
    version: str
    settings: str

    async def install(self, url: str) -> None: ...
    async def open_publisher(self, url: str) -> Publisher: ...
    async def start_consumer(self, url: str, arrivals: Arrivals) -> Consumer: ...


def percentile(sorted_values: list[int], q: float) -> int:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def latency_row(title: str, nanoseconds: list[int]) -> dict[str, float]:
    """Prints the row in microseconds, as MosaicBenchmarks does, and returns p50, p99 and max in ms."""
    values = sorted(ns // 1_000 for ns in nanoseconds)
    if not values:
        print(f"{title:<44}  no samples")
        return {}
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    print(f"{title:<44}  {len(values):<8}  {p50:<8}  {p99:<8}  {values[0]:<8}  {values[-1]:<8}")
    return {"p50": p50 / 1_000, "p99": p99 / 1_000, "max": values[-1] / 1_000, "n": len(values)}


async def publish(publisher: Publisher, count: int, publishers: int, batch: int, first: int) -> float:
    """Publishes `count` jobs numbered from first + 1: `publishers` tasks at once, in batches of `batch`; seconds."""

    async def one(index: int) -> None:
        mine = list(range(first + index + 1, first + count + 1, publishers))
        for chunk in range(0, len(mine), batch):
            orders = mine[chunk : chunk + batch]
            if len(orders) == 1:
                await publisher.publish(orders[0], 0)
            else:
                await publisher.publish_many([(order, 0) for order in orders])

    start = time.perf_counter()
    await asyncio.gather(*(one(index) for index in range(publishers)))
    return time.perf_counter() - start


async def commit_floor(url: str, ticks: int, start: float) -> list[int]:
    """One row INSERTed and committed (synced, autocommit) every 10 ms from `start`, on a connection of its own."""
    import psycopg

    took: list[int] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute("CREATE TABLE IF NOT EXISTS bench_commit_floor (tick integer)")
        for tick in range(ticks):
            sent = time.monotonic_ns()
            await connection.execute("INSERT INTO bench_commit_floor VALUES (%s)", (tick,))
            took.append(time.monotonic_ns() - sent)
            await asyncio.sleep(max(0.0, start + 0.01 * (tick + 1) - time.monotonic()))
    return took


async def run(peer: Peer, url: str, rate: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    results: dict[str, Any] = {"system": peer.name, "version": peer.version, "settings": peer.settings}
    failures: list[str] = []
    results["failures"] = failures

    async def step(key: str, body: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await body()
        except Exception as error:  # a peer's failure is reported in its row, and the run goes on
            failures.append(f"{key}: {type(error).__name__}: {error}")
            traceback.print_exc()
            return None

    await peer.install(url)
    print(f"\nDurable jobs on PostgreSQL: {peer.name} {peer.version} ({peer.settings})")
    print(f"{'':<44}  {'jobs':<8}  {'jobs/s':<10}  {'seconds':<10}")

    def rate_row(key: str, title: str, count: int, seconds: float) -> None:
        results[key] = count / seconds
        print(f"{title:<44}  {count:<8}  {count / seconds:<10.0f}  {seconds:<10.2f}")

    # Publishing, no consumer running; then the backlog drained by one consumer.
    published = 0
    publisher = await peer.open_publisher(url)
    for key, title, count, publishers, batch in [
        ("publish_1", "publish, 1 publisher", EVENTS // 5, 1, 1),
        ("publish_16", "publish, 16 publishers", EVENTS, 16, 1),
        ("publish_64", "publish, 64 publishers", EVENTS, 64, 1),
        ("publish_batch", "publish, batches of 100", EVENTS, 1, 100),
    ]:
        took = await step(key, lambda: publish(publisher, count, publishers, batch, published))
        published += count
        if took is not None:
            rate_row(key, title, count, took)

    for consumers, key in [(1, "drain_1"), (2, "drain_2")]:
        arrivals = Arrivals(loop)
        if consumers == 2:
            took = await step("publish, batches of 100 (for 2 consumers)", lambda: publish(publisher, EVENTS, 1, 100, 0))
            published = EVENTS if took is not None else 0
        started = time.perf_counter()
        running: list[Consumer] = []

        async def drain() -> float:
            for _ in range(consumers):
                running.append(await peer.start_consumer(url, arrivals))
            await arrivals.wait_for(published)
            return time.perf_counter() - started

        took = await step(key, drain)
        for consumer in running:
            await step(f"{key}: stop", consumer.stop)
        if took is not None:
            rate_row(key, f"drain, {consumers} consumer{'s' if consumers > 1 else ''}", published, took)

    # Latency: one consumer, and the publisher above.
    arrivals = Arrivals(loop)
    consumer = await peer.start_consumer(url, arrivals)
    print("\nenqueue to handler, µs")
    print(f"{'':<44}  {'jobs':<8}  {'p50':<8}  {'p99':<8}  {'min':<8}  {'max':<8}")

    async def one_at_a_time() -> list[int]:
        for order in range(1, ONE_AT_A_TIME + WARM_UP + 1):
            await publisher.publish(order, time.monotonic_ns())
            await arrivals.wait_for(order)
            if order == WARM_UP:
                arrivals.take()
        return arrivals.take()

    latencies = await step("one_at_a_time", one_at_a_time)
    if latencies is not None:
        results["one_at_a_time"] = latency_row("one at a time", latencies)

    async def paced() -> tuple[list[int], list[int], list[int]]:
        first = arrivals.count
        returned: list[int] = []

        async def publish_one(order: int) -> None:
            sent_at = time.monotonic_ns()
            await publisher.publish(order, sent_at)
            returned.append(time.monotonic_ns() - sent_at)

        start = time.monotonic()
        floor = asyncio.create_task(commit_floor(url, TICKS, start))
        tasks = []
        order = first
        for tick in range(TICKS):
            for _ in range((tick + 1) * rate // 100 - tick * rate // 100):
                order += 1
                tasks.append(asyncio.create_task(publish_one(order)))
            await asyncio.sleep(max(0.0, start + 0.01 * (tick + 1) - time.monotonic()))
        await asyncio.gather(*tasks)
        await arrivals.wait_for(order)
        return arrivals.take(), returned, await floor

    taken = await step("fixed_rate", paced)
    if taken is not None:
        handled, returned, floor = taken
        results["fixed"] = latency_row(f"at {rate} jobs/s (fixed)", handled)
        results["fixed_returned"] = latency_row("  of which enqueue returned (fixed)", returned)
        results["fixed_floor"] = latency_row("  floor (fixed): one-row commit every 10 ms", floor)
    await step("latency: stop", consumer.stop)
    await publisher.close()
    print("RESULT " + json.dumps(results))
    return results


def main(peer_factory: Callable[[], Peer]) -> None:
    """`python PEER.py URL RATE`: runs every row against the database at URL."""
    url, rate = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100
    asyncio.run(run(peer_factory(), url, rate))
