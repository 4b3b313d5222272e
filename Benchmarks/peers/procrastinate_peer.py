"""procrastinate through its public API: an `App` on a `PsycopgConnector` (psycopg 3, its default pool) and one
task; `Task.defer_async` to publish one job, `Task.batch_defer_async` for a batch; a consumer is an `App` of its own
running `App.run_worker_async()` at its defaults (concurrency 1, LISTEN/NOTIFY on, fetch polling every 5 s), stopped
by cancelling it, as procrastinate documents for a worker inside a bigger application."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from importlib.metadata import version as installed

import procrastinate

import harness

QUEUE = "bench"
# Its warning that the app is made in __main__ concerns workers in other processes, which import tasks by name; the
# workers here run in this process.
logging.getLogger("procrastinate.blueprints").setLevel(logging.ERROR)


def make_app(url: str, arrivals: harness.Arrivals | None = None) -> tuple[procrastinate.App, procrastinate.tasks.Task]:
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))

    @app.task(name="bench_receipt", queue=QUEUE)
    async def receipt(order: int, sent_at: int) -> None:
        if arrivals is not None:
            arrivals.arrived(sent_at)

    return app, receipt


class Publisher:
    def __init__(self, app: procrastinate.App, task: procrastinate.tasks.Task) -> None:
        self.app = app
        self.task = task

    async def publish(self, order: int, sent_at: int) -> None:
        await self.task.defer_async(order=order, sent_at=sent_at)

    async def publish_many(self, jobs: list[tuple[int, int]]) -> None:
        await self.task.batch_defer_async(*({"order": order, "sent_at": sent_at} for order, sent_at in jobs))

    async def close(self) -> None:
        await self.app.close_async()


class Consumer:
    def __init__(self, app: procrastinate.App) -> None:
        self.app = app
        self.task = asyncio.create_task(app.run_worker_async(install_signal_handlers=False))

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 30)
        await self.app.close_async()


class ProcrastinatePeer:
    name = "procrastinate"
    version = installed("procrastinate")
    settings = "psycopg " + installed("psycopg") + "; run_worker_async() defaults: concurrency 1, listen_notify on"

    async def install(self, url: str) -> None:
        app, _ = make_app(url)
        async with app.open_async():
            await app.schema_manager.apply_schema_async()

    async def open_publisher(self, url: str) -> Publisher:
        app, task = make_app(url)
        await app.open_async()
        return Publisher(app, task)

    async def start_consumer(self, url: str, arrivals: harness.Arrivals) -> Consumer:
        app, _ = make_app(url, arrivals)
        await app.open_async()
        return Consumer(app)


if __name__ == "__main__":
    harness.main(ProcrastinatePeer)
