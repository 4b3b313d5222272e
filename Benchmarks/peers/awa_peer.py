"""awa (awa-pg, a Rust core) through its public Python API: `AsyncClient` (its default pool of 10 connections);
`insert` to publish one job and `enqueue_many_copy` (its COPY ingestion, documented for high-volume Python
producers) for a batch; a consumer is an `AsyncClient` of its own with one `@client.task` handler, started with
`start([(queue, 50)])` (50 workers, the documented default `max_workers` of a queue; NOTIFY, and a poll every
200 ms) and stopped with `shutdown()`.

The engine is queue storage, which awa documents as what a fresh install gets; in 0.6.9 `migrate()` on a new
database leaves the older canonical engine active (whose workers here were woken by the 200 ms poll, not by NOTIFY),
so `install()` also calls `install_queue_storage()`, awa's call for a queue-storage-only setup."""

from __future__ import annotations

import dataclasses
from importlib.metadata import version as installed

import awa

import harness

QUEUE = "bench"


@dataclasses.dataclass
class BenchReceipt:
    order: int
    sent_at: int


class Publisher:
    def __init__(self, client: awa.AsyncClient) -> None:
        self.client = client

    async def publish(self, order: int, sent_at: int) -> None:
        await self.client.insert(BenchReceipt(order, sent_at), queue=QUEUE)

    async def publish_many(self, jobs: list[tuple[int, int]]) -> None:
        await self.client.enqueue_many_copy([BenchReceipt(order, sent_at) for order, sent_at in jobs], queue=QUEUE)

    async def close(self) -> None:
        await self.client.close()


class Consumer:
    def __init__(self, client: awa.AsyncClient) -> None:
        self.client = client

    async def stop(self) -> None:
        await self.client.shutdown()
        await self.client.close()


class AwaPeer:
    name = "awa"
    version = installed("awa-pg")
    settings = "queue storage; AsyncClient defaults (10 connections); start([(queue, 50)]): 50 workers, poll 200 ms"

    async def install(self, url: str) -> None:
        client = awa.AsyncClient(url)
        await client.migrate()
        await client.install_queue_storage()
        await client.close()

    async def open_publisher(self, url: str) -> Publisher:
        return Publisher(awa.AsyncClient(url))

    async def start_consumer(self, url: str, arrivals: harness.Arrivals) -> Consumer:
        client = awa.AsyncClient(url)

        @client.task(BenchReceipt, queue=QUEUE)
        async def receipt(job: awa.Job[BenchReceipt]) -> None:
            arrivals.arrived(job.args.sent_at)

        await client.start([(QUEUE, 50)])
        return Consumer(client)


if __name__ == "__main__":
    harness.main(AwaPeer)
