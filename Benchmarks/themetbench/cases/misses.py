"""The miss path: many requests at once for one uncached object behind a slow upstream."""

import asyncio
import statistics
import time

from ..http_client import Connection, get_json
from ..report import Table
from ..workload import MISS_LATENCY_MS

MISS_IDS = {"themet": 77777, "nginx": 77778}
# Fetched once first, so that both servers have their upstream connection open: the stampede
# then measures the miss path, not a TCP connect.
MISS_WARM_IDS = {"themet": 77770, "nginx": 77771}
MISS_WAITERS = 100


async def stampede(port: int, path: str, waiters: int) -> list[tuple[int, float]]:
    """Opens `waiters` connections, then sends one GET `path` on each at once: (status, ms) each."""
    connections = [Connection(port) for _ in range(waiters)]
    try:
        await asyncio.gather(*(connection.open() for connection in connections))
        started = time.perf_counter()
        for connection in connections:
            connection.send(path)

        async def arrival(connection: Connection) -> tuple[int, float]:
            answer = await connection.receive()
            return answer.status, (time.perf_counter() - started) * 1000

        return await asyncio.gather(*(arrival(connection) for connection in connections))
    finally:
        for connection in connections:
            connection.close()


def benchmark_misses(servers: dict[str, int], fake_port: int, problems: list[str]) -> Table:
    """100 simultaneous requests for one never-requested object per server, upstream 50 ms away."""
    table = Table(f"Miss path: {MISS_WAITERS} requests at once for one uncached object, "
                  f"upstream latency {MISS_LATENCY_MS} ms",
                  ["server", "object", "upstream requests", "p50 ms", "p99 ms", "max ms", "statuses"])
    for server, port in servers.items():
        object_id = MISS_IDS[server]
        get_json(port, f"/objects/{MISS_WARM_IDS[server]}")
        answers = asyncio.run(stampede(port, f"/objects/{object_id}", MISS_WAITERS))
        latencies = sorted(ms for _, ms in answers)
        statuses = sorted({status for status, _ in answers})
        upstream = get_json(fake_port, "/__stats")["paths"].get(f"/public/collection/v1/objects/{object_id}", 0)
        table.rows.append([server, str(object_id), str(upstream), f"{statistics.median(latencies):.1f}",
                           f"{percentile_of(latencies, 99):.1f}", f"{latencies[-1]:.1f}",
                           ", ".join(map(str, statuses))])
        if statuses != [200]:
            problems.append(f"{server} miss path: statuses {statuses}, expected only 200")
    table.notes.append("each server fetched one other object first, so its upstream connection is open")
    table.notes.append(f"targets (reported, not enforced): exactly 1 upstream request; p50 within 10 ms of "
                       f"{MISS_LATENCY_MS} ms. nginx's proxy_cache_lock makes waiters poll every 500 ms")
    return table


def percentile_of(sorted_values: list[float], percent: float) -> float:
    """The nearest-rank percentile of already sorted values."""
    rank = max(1, round(percent / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]
