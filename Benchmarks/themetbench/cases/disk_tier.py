"""The persistent tier: start-up from a filled data directory, hits read from the disk, RSS."""

import argparse
import statistics
import time
from pathlib import Path

from .. import BenchmarkError
from ..http_client import get_all_ok, get_json
from ..proc import descendant_pids, proc_kib
from ..processes import Supervisor
from ..processes import Child
from ..report import Table, against_target, mib
from ..servers import launch_themet, start_themet, wait_until_healthy
from ..workload import HOT_ID, MiB, REPO, SPREAD_IDS, object_paths
from ..wrk import Case, WrkResult, run_wrk

DISK_MEMORY_TIER = "64MiB"


def spread_case(objects: int) -> Case:
    """Uniform hits over objects 1..`objects`."""
    return Case(f"{objects:,}-object spread", "/", ["-s", str(REPO / "Benchmarks/spread.lua")], [str(objects)])


def benchmark_nginx_file_cache(nginx: tuple[Child, int], objects: int, arguments: argparse.Namespace,
                               problems: list[str]) -> dict[int, WrkResult]:
    """nginx's proxy_cache hits over the `objects` it cached in the memory step (each hit opens
    its cache file), per connection count: medians of req/s and CPU over the rounds."""
    child, port = nginx
    results = {}
    for connections in arguments.connections:
        runs = [run_wrk(port, spread_case(objects), connections, arguments.duration, descendant_pids(child.pid))
                for _ in range(arguments.rounds)]
        if any(run.errors for run in runs):
            problems.append(f"nginx, {objects:,}-object spread, {connections} connections: errors")
        runs.sort(key=lambda run: run.requests_per_second)
        results[connections] = runs[len(runs) // 2]
    return results


def benchmark_disk(supervisor: Supervisor, bins: Path, fake_port: int, data: Path, objects: int,
                   arguments: argparse.Namespace, problems: list[str],
                   nginx_hits: dict[int, WrkResult]) -> list[Table]:
    """On `data`, which holds `objects` entries on disk (themet stopped): start-up to the first
    object answered from the disk, then hits with a memory tier too small for the working set
    next to memory hits and to nginx's file-cache hits on the same spread (`nginx_hits`, by
    connection count), then RSS."""
    hot = f"/objects/{min(HOT_ID, objects)}"
    extra = ["--cache-size", DISK_MEMORY_TIER]
    startup = Table(f"Start-up with {objects:,} entries on disk: launch to the first answer "
                    f"({hot}, read from the disk), {arguments.startup_runs} run(s)",
                    ["measure", "median ms", "min ms", "max ms"])
    times = []
    for _ in range(arguments.startup_runs):
        started = time.monotonic()
        child, port = launch_themet(supervisor, bins, fake_port, data=data, extra=extra)
        times.append((wait_until_healthy(child, port, hot) - started) * 1000)
        cache = get_json(port, "/health")["cache"]
        supervisor.stop(child)
        if cache["diskHits"] != 1 or cache["misses"] != 0:
            raise BenchmarkError(f"themet: the first {hot} after a restart was not a disk hit: {cache}")
    startup.rows.append(["launch → first object", f"{statistics.median(times):.1f}", f"{min(times):.1f}",
                         f"{max(times):.1f}"])
    startup.notes.append("target < 150 ms; reported, not enforced")

    child, port = start_themet(supervisor, bins, fake_port, data=data, extra=extra)
    spread = ["-s", str(REPO / "Benchmarks/spread.lua")]
    cases = [Case(f"{SPREAD_IDS}-object spread (memory hits)", "/", spread, [str(SPREAD_IDS)]),
             Case(f"{objects:,}-object spread (mostly disk hits)", "/", spread, [str(objects)])]
    get_all_ok(port, "themet", object_paths(range(1, SPREAD_IDS + 1)))
    hits = Table(f"Persistent tier: hits with a {DISK_MEMORY_TIER} memory tier over {objects:,} entries on disk, "
                 f"{arguments.rounds} round(s) of {arguments.duration} s, medians",
                 ["case", "connections", "req/s", "p50 ms", "p99 ms", "server CPU µs/req", "from disk"])
    medians: dict[tuple[int, str], tuple[float, float]] = {}
    for connections in arguments.connections:
        for case in cases:
            runs, shares = [], []
            for _ in range(arguments.rounds):
                before = get_json(port, "/health")["cache"]
                result = run_wrk(port, case, connections, arguments.duration, [child.pid])
                after = get_json(port, "/health")["cache"]
                if result.errors:
                    problems.append(f"themet, {case.name}, {connections} connections: {result.errors} errors")
                served = sum(after[name] - before[name] for name in ("hits", "diskHits", "misses", "collapsed"))
                shares.append((after["diskHits"] - before["diskHits"]) / max(1, served))
                runs.append(result)
            hits.rows.append([
                case.name, str(connections), f"{statistics.median(r.requests_per_second for r in runs):,.0f}",
                f"{statistics.median(r.p50_ms for r in runs):.2f}", f"{statistics.median(r.p99_ms for r in runs):.2f}",
                f"{statistics.median(r.server_cpu_us for r in runs):.1f}", f"{statistics.median(shares):.0%}"])
            medians[(connections, case.name)] = (statistics.median(r.requests_per_second for r in runs),
                                                 statistics.median(r.server_cpu_us for r in runs))
        nginx = nginx_hits[connections]
        hits.rows.append([f"nginx file cache, {objects:,}-object spread", str(connections),
                          f"{nginx.requests_per_second:,.0f}", f"{nginx.p50_ms:.2f}", f"{nginx.p99_ms:.2f}",
                          f"{nginx.server_cpu_us:.1f}", "all (a file per hit)"])
        (memory_rate, memory_cpu), (disk_rate, disk_cpu) = (medians[(connections, case.name)] for case in cases)
        hits.notes.append(
            f"{connections} connections, disk-tier hits against memory hits: req/s "
            f"{against_target(disk_rate / memory_rate, 0.5, True)}, CPU per request "
            f"{against_target(disk_cpu / memory_cpu, 2.5, False)}; against nginx's file cache on the same spread: "
            f"req/s {against_target(disk_rate / nginx.requests_per_second, 1.0, True)}, CPU per request "
            f"{disk_cpu / nginx.server_cpu_us:.2f}×")
    hits.notes.append("from disk: the share of answers read from SQLite (/health cache.diskHits) because the "
                      "memory tier did not hold them; the rest are memory hits (and misses: none expected)")

    rss = proc_kib(child.pid, "VmRSS") * 1024
    disk = get_json(port, "/health")["disk"]
    memory = Table(f"Memory with {objects:,} entries on disk and a {DISK_MEMORY_TIER} memory tier",
                   ["measure", "themet"])
    limit = 64 * MiB + 80 * MiB  # the memory tier's bound, plus what the process needs besides
    memory.rows += [
        ["RSS MiB (after the runs above)", mib(rss)],
        ["disk rows / MiB", f"{disk['entries']:,} / {mib(disk['bytes'] or 0)}"],
        ["target RSS ≤ 64 MiB + 80 MiB", f"{mib(limit)}: {'met' if rss <= limit else 'MISSED'}"],
    ]
    memory.notes.append("the target is reported, not enforced")
    supervisor.stop(child)
    return [startup, hits, memory]
