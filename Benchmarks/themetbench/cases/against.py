"""Another build of themet in nginx's place: the fill rate of both builds, interleaved in slices,
for an A/B of a change (the hits come from the ordinary hit cases, with the other build as the
reference)."""

import time

from ..http_client import get_all_ok
from ..proc import cpu_seconds
from ..processes import Child
from ..report import Table
from ..workload import FILL_CONNECTIONS, object_paths

FILL_SLICES = 10


def benchmark_fill_against(servers: dict[str, tuple[Child, int]], objects: int) -> Table:
    """Caches ids 1..objects in each build (most of them misses), a slice at a time, one build
    then the other, so that a slower spell of the machine falls on both; objects/s and server CPU
    per object for each."""
    paths = object_paths(range(1, objects + 1))
    size = -(-len(paths) // FILL_SLICES)
    seconds = dict.fromkeys(servers, 0.0)
    cpu = dict.fromkeys(servers, 0.0)
    for start in range(0, len(paths), size):
        piece = paths[start:start + size]
        for server, (child, port) in servers.items():
            cpu_before = cpu_seconds([child.pid])
            started = time.monotonic()
            get_all_ok(port, server, piece, connections=FILL_CONNECTIONS)
            seconds[server] += time.monotonic() - started
            cpu[server] += cpu_seconds([child.pid]) - cpu_before
    table = Table(f"Fill rate: {objects:,} distinct objects over {FILL_CONNECTIONS} connections, upstream "
                  f"without latency, the builds alternating every {size:,} objects",
                  ["server", "objects/s", "server CPU µs/object", "seconds"])
    for server in servers:
        table.rows.append([server, f"{objects / seconds[server]:,.0f}", f"{cpu[server] / objects * 1e6:.0f}",
                           f"{seconds[server]:.1f}"])
    table.notes.append("both builds fetch the same objects from the same met-fixture-server; the warm-up had "
                       "cached the 1,000 spread objects and the hot one")
    return table
