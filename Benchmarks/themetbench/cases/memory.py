"""The fill rate while many distinct objects are cached, then both servers' memory and cache sizes."""

import os
import time
from pathlib import Path

from .. import BenchmarkError
from ..http_client import get_all_ok, get_json
from ..proc import cpu_seconds, descendant_pids, proc_kib
from ..processes import Child
from ..report import Table, against_target, mib
from ..workload import FILL_CONNECTIONS, MiB, object_paths


def directory_size(path: Path) -> tuple[int, int]:
    """Files under `path` and the sum of their sizes in bytes."""
    files = size = 0
    for directory, _, names in os.walk(path):
        for name in names:
            files += 1
            size += os.path.getsize(os.path.join(directory, name))
    return files, size


def benchmark_memory(themet: tuple[Child, int], nginx: tuple[Child, int], objects: int) -> list[Table]:
    """Caches ids 1..objects in both servers (most of them misses: the fill rate), then reads their
    memory and cache sizes."""
    paths = object_paths(range(1, objects + 1))
    sizes, figures = {}, {}
    fill = Table(f"Fill rate: {objects:,} distinct objects over {FILL_CONNECTIONS} connections, "
                 f"upstream without latency", ["server", "objects/s", "server CPU µs/object", "seconds"])
    for server, (child, port) in {"themet": themet, "nginx": nginx}.items():
        pids = [child.pid, *descendant_pids(child.pid)]
        cpu_before = cpu_seconds(pids)
        started = time.monotonic()
        sizes[server] = get_all_ok(port, server, paths, connections=FILL_CONNECTIONS)
        elapsed = time.monotonic() - started
        cpu = cpu_seconds(pids) - cpu_before
        print(f"  {server}: {objects:,} objects requested in {elapsed:.1f} s", flush=True)
        fill.rows.append([server, f"{objects / elapsed:,.0f}", f"{cpu / objects * 1e6:.0f}", f"{elapsed:.1f}"])
        figures[server] = (objects / elapsed, cpu / objects)
    fill.notes.append(f"themet against nginx: objects/s "
                      f"{against_target(figures['themet'][0] / figures['nginx'][0], 1.0, True)}, CPU per object "
                      f"{against_target(figures['themet'][1] / figures['nginx'][1], 1.5, False)} (its gzip copy "
                      f"included; nginx keeps none)")
    fill.notes.append("the warm-up cached the 1,000 spread objects and the hot one; every other request is a "
                      "miss fetched from met-fixture-server over loopback HTTP (themet: libcurl, keep-alive; "
                      "nginx: proxy_pass with upstream keep-alive). The client (Python) also shares the 2 cores")
    health = get_json(themet[1], "/health")
    cache = health["cache"]
    pictures = (health.get("images") or {}).get("cache") or {"bytes": 0, "entries": 0}
    if cache["entries"] < objects:
        raise BenchmarkError(f"themet: /health cache.entries is {cache['entries']} after caching {objects} objects")
    themet_rss = proc_kib(themet[0].pid, "VmRSS") * 1024
    nginx_pids = [nginx[0].pid, *descendant_pids(nginx[0].pid)]
    nginx_rss = sum(proc_kib(pid, "VmRSS") for pid in nginx_pids) * 1024
    nginx_pss = sum(proc_kib(pid, "Pss") for pid in nginx_pids) * 1024
    files, cache_dir_bytes = directory_size(Path(nginx[0].extra_log).parent / "cache")
    cached = cache["bytes"] + pictures["bytes"]
    limit = 1.5 * cached + 40 * MiB
    bound = cached + 64 * MiB

    table = Table(f"Memory with {objects:,} objects cached", ["measure", "themet", "nginx"])
    table.rows += [
        ["RSS MiB", mib(themet_rss),
         f"{mib(nginx_rss)} (VmRSS of {len(nginx_pids)} processes; PSS {mib(nginx_pss)})"],
        ["cache MiB", f"{mib(cache['bytes'])} (/health cache.bytes, {cache['entries']:,} entries)",
         f"{mib(cache_dir_bytes)} (cache directory, {files:,} files)"],
        ["pictures' memory tier MiB", f"{mib(pictures['bytes'])} ({pictures['entries']:,} entries, from the "
         f"picture steps before)", "n/a"],
        ["object bodies MiB", f"{mib(sizes['themet'])}", f"{mib(sizes['nginx'])}"],
        ["target RSS ≤ 1.5 × cached + 40 MiB", f"{mib(limit)}: {'met' if themet_rss <= limit else 'MISSED'}", "n/a"],
        ["target RSS ≤ cached + 64 MiB", f"{mib(bound)}: {'met' if themet_rss <= bound else 'MISSED'} "
         f"(RSS − cached: {mib(themet_rss - cached)})", "n/a"],
    ]
    table.notes.append("cached: the records' memory tier and the pictures' (both charge what they hold)")
    table.notes.append("object bodies: the sum of the bodies of the answers to the requests above, measured "
                       "(not estimated). The target is reported, not enforced")
    return [fill, table]
