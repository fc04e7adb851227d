"""A collection-sized working set: every record cached, the memory tier at its default size, so
most hits are read from the disk tier; beside nginx's file cache over the same records."""

import argparse
import statistics
import time
from pathlib import Path

from ..http_client import get_all_ok, get_json
from ..proc import cpu_seconds, descendant_pids, proc_kib
from ..processes import Supervisor
from ..report import Table, against_target, mib
from ..servers import start_fake, start_themet
from ..nginx import start_nginx
from ..workload import FILL_CONNECTIONS, object_paths
from ..wrk import WrkResult, run_wrk
from .disk_tier import spread_case
from .local_search import benchmark_local_search
from .snapshots import benchmark_snapshots

# About the Met's open-access collection (490,000 records), as the issue that asked for it says.
COLLECTION_RECORDS = 400_000
# The defaults a user starts with, but a disk tier that holds the collection: at about 4 KB a
# record with its gzip copy, 400,000 records take about 1.6 GB, past the default 1 GiB.
COLLECTION_FLAGS = ["--cache-size", "256MiB", "--disk-cache-size", "4GiB"]


def benchmark_collection(supervisor: Supervisor, bins: Path, fixtures: Path, records: int,
                         arguments: argparse.Namespace, problems: list[str]) -> list[Table]:
    """Caches ids 1..`records` in a themet with the default memory tier and in an nginx (the fill,
    timed), then hits over all of them, uniformly, on both, interleaved; then themet's RSS; then
    local search over what themet holds, and its reindex (`benchmark_local_search`); then a
    snapshot of themet's cache exported while it serves, and imported (`benchmark_snapshots`)."""
    fake = start_fake(supervisor, bins, fixtures, synthetic=records)
    themet, themet_port = start_themet(supervisor, bins, fake, extra=COLLECTION_FLAGS)
    nginx, nginx_port = start_nginx(supervisor, fake)
    servers = {"themet": (themet, themet_port), "nginx": (nginx, nginx_port)}
    pids = {"themet": [themet.pid], "nginx": descendant_pids(nginx.pid)}

    fill = Table(f"Collection-sized working set: filling {records:,} records over {FILL_CONNECTIONS} connections",
                 ["server", "objects/s", "server CPU µs/object", "seconds"])
    for server, (child, port) in servers.items():
        server_pids = [child.pid, *descendant_pids(child.pid)]
        cpu_before, started = cpu_seconds(server_pids), time.monotonic()
        get_all_ok(port, server, object_paths(range(1, records + 1)), connections=FILL_CONNECTIONS)
        elapsed, cpu = time.monotonic() - started, cpu_seconds(server_pids) - cpu_before
        fill.rows.append([server, f"{records / elapsed:,.0f}", f"{cpu / records * 1e6:.0f}", f"{elapsed:.1f}"])
        print(f"  {server}: {records:,} records cached in {elapsed:.1f} s", flush=True)

    misses_before = get_json(themet_port, "/health")["cache"]["misses"]
    case = spread_case(records)
    hits = Table(f"Collection-sized working set: hits over all {records:,} records, themet with a "
                 f"{COLLECTION_FLAGS[1]} memory tier, {arguments.rounds} round(s) of {arguments.duration} s, medians",
                 ["server", "connections", "req/s", "p50 ms", "p99 ms", "server CPU µs/req", "from disk"])
    for connections in arguments.connections:
        runs: dict[str, list[WrkResult]] = {"themet": [], "nginx": []}
        shares = []
        for _ in range(arguments.rounds):
            for server, (_, port) in servers.items():
                before = get_json(themet_port, "/health")["cache"] if server == "themet" else None
                result = run_wrk(port, case, connections, arguments.duration, pids[server])
                if result.errors:
                    problems.append(f"{server}, {case.name}, {connections} connections: {result.errors} errors")
                if before:
                    after = get_json(themet_port, "/health")["cache"]
                    served = sum(after[name] - before[name] for name in ("hits", "diskHits", "misses", "collapsed"))
                    shares.append((after["diskHits"] - before["diskHits"]) / max(1, served))
                runs[server].append(result)
        medians = {}
        for server, results in runs.items():
            rate = statistics.median(r.requests_per_second for r in results)
            cpu = statistics.median(r.server_cpu_us for r in results)
            medians[server] = (rate, cpu)
            hits.rows.append([
                server if server == "themet" else "nginx file cache", str(connections), f"{rate:,.0f}",
                f"{statistics.median(r.p50_ms for r in results):.2f}",
                f"{statistics.median(r.p99_ms for r in results):.2f}", f"{cpu:.1f}",
                f"{statistics.median(shares):.0%}" if server == "themet" else "all (a file per hit)"])
        hits.notes.append(
            f"{connections} connections, themet against nginx's file cache: req/s "
            f"{against_target(medians['themet'][0] / medians['nginx'][0], 1.0, True)}, CPU per request "
            f"{medians['themet'][1] / medians['nginx'][1]:.2f}×")
    hits.notes.append("from disk: the share of themet's answers read from SQLite because the memory tier did not "
                      "hold them (/health cache.diskHits)")

    cache = get_json(themet_port, "/health")
    if cache["cache"]["misses"] > misses_before:
        problems.append(f"themet: {cache['cache']['misses'] - misses_before} misses over a collection it had "
                        f"cached (the disk tier did not hold it all)")
    memory = Table(f"Memory with {records:,} records cached, the memory tier at {COLLECTION_FLAGS[1]}",
                   ["measure", "themet"])
    rss = proc_kib(themet.pid, "VmRSS") * 1024
    memory.rows += [
        ["RSS MiB (after the runs above)", mib(rss)],
        ["memory tier MiB / entries", f"{mib(cache['cache']['bytes'])} / {cache['cache']['entries']:,}"],
        ["disk rows / MiB", f"{cache['disk']['entries']:,} / {mib(cache['disk']['bytes'] or 0)}"],
    ]
    supervisor.stop(nginx)
    local_search = benchmark_local_search(bins, themet, themet_port, records, arguments, problems)
    snapshots = benchmark_snapshots(supervisor, bins, themet, themet_port, records, arguments, problems)
    supervisor.stop(themet)
    return [fill, hits, memory, local_search, snapshots]
