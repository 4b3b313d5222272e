"""pgqueuer through its public API: `Queries.enqueue` (a list of jobs for a batch) on an asyncpg pool of asyncpg's
default size to publish; a consumer is `PgQueuer(AsyncpgDriver(connection))` with one entrypoint, run with
`PgQueuer.run()`'s defaults (batch_size 10, no cap on concurrent jobs, LISTEN/NOTIFY, FOR UPDATE SKIP LOCKED)."""

from __future__ import annotations

import asyncio
from importlib.metadata import version as installed

import asyncpg
from pgqueuer import PgQueuer
from pgqueuer.db import AsyncpgDriver, AsyncpgPoolDriver
from pgqueuer.models import Job
from pgqueuer.queries import Queries

import harness

ENTRYPOINT = "bench_receipt"


def payload(order: int, sent_at: int) -> bytes:
    return f"{order} {sent_at}".encode()


class Publisher:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.queries = Queries(AsyncpgPoolDriver(pool))

    async def publish(self, order: int, sent_at: int) -> None:
        await self.queries.enqueue(ENTRYPOINT, payload(order, sent_at))

    async def publish_many(self, jobs: list[tuple[int, int]]) -> None:
        await self.queries.enqueue(
            [ENTRYPOINT] * len(jobs), [payload(order, sent_at) for order, sent_at in jobs], [0] * len(jobs)
        )

    async def close(self) -> None:
        await self.pool.close()


class Consumer:
    def __init__(self, connection: asyncpg.Connection, pgq: PgQueuer) -> None:
        self.connection = connection
        self.pgq = pgq
        self.task = asyncio.create_task(pgq.run())

    async def stop(self) -> None:
        self.pgq.shutdown.set()
        await asyncio.wait_for(self.task, 30)
        await self.connection.close()


class PgqueuerPeer:
    name = "pgqueuer"
    version = installed("pgqueuer")
    settings = "asyncpg " + installed("asyncpg") + "; PgQueuer.run() defaults: batch_size 10, unlimited concurrency"

    async def install(self, url: str) -> None:
        connection = await asyncpg.connect(url)
        await Queries(AsyncpgDriver(connection)).install()
        await connection.close()

    async def open_publisher(self, url: str) -> Publisher:
        return Publisher(await asyncpg.create_pool(url))

    async def start_consumer(self, url: str, arrivals: harness.Arrivals) -> Consumer:
        connection = await asyncpg.connect(url)
        pgq = PgQueuer(AsyncpgDriver(connection))

        @pgq.entrypoint(ENTRYPOINT)
        async def receipt(job: Job) -> None:
            assert job.payload is not None
            arrivals.arrived(int(job.payload.split()[1]))

        return Consumer(connection, pgq)


if __name__ == "__main__":
    harness.main(PgqueuerPeer)
