"""The shared tier: hits from Redis next to memory hits, and misses shared by three instances."""

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from .. import BenchmarkError
from ..http_client import get_all_ok, get_json
from ..processes import Child, Supervisor
from ..report import Table, against_target
from ..servers import START_TIMEOUT_SECONDS, start_redis, start_themet
from ..workload import FILL_CONNECTIONS, HOST, MISS_LATENCY_MS, REPO, SPREAD_IDS, object_paths
from ..wrk import Case, parse_wrk, run_wrk

REDIS_MEMORY_TIER = "1MiB"
REDIS_SPREAD_IDS = 20_000
SHARED_MISS_CONNECTIONS = 48
SHARED_MISS_STARTS = {"one instance": 50_001, "three instances": 75_001}


def start_group_member(supervisor: Supervisor, bins: Path, fake_port: int, redis_socket: Path, prefix: str,
                       extra: Iterable[str] = ()) -> tuple[Child, int]:
    """A themet sharing the Redis on `redis_socket` under `prefix`, once its /health shows Redis connected."""
    child, port = start_themet(supervisor, bins, fake_port, extra=[
        "--redis", f"unix://{redis_socket}", "--redis-prefix", prefix, *extra])
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while get_json(port, "/health")["redis"]["state"] != "connected":
        if time.monotonic() > deadline:
            raise BenchmarkError(f"themet on port {port} never connected to Redis:\n{child.tail()}")
        time.sleep(0.02)
    return child, port


def benchmark_redis(supervisor: Supervisor, bins: Path, fake_port: int, slow_fake_port: int,
                    arguments: argparse.Namespace, problems: list[str]) -> list[Table]:
    """Hits from Redis next to memory hits; then a shared-miss workload on three instances
    sharing one Redis next to one instance."""
    redis_socket = start_redis(supervisor)
    unpaced = ["--upstream-rate", "10000", "--upstream-burst", "1000", "--upstream-concurrency", "64"]
    spread_ids = min(REDIS_SPREAD_IDS, arguments.objects)
    filler, filler_port = start_group_member(supervisor, bins, fake_port, redis_socket, "bench-hits:",
                                             [*unpaced, "--disk-cache-size", "0"])
    get_all_ok(filler_port, "themet", object_paths(range(1, spread_ids + 1)), connections=FILL_CONNECTIONS)
    reader, reader_port = start_group_member(supervisor, bins, fake_port, redis_socket, "bench-hits:",
                                             [*unpaced, "--disk-cache-size", "0", "--cache-size", REDIS_MEMORY_TIER])
    spread = ["-s", str(REPO / "Benchmarks/spread.lua")]
    cases = [("memory hits", filler, filler_port, Case(f"{SPREAD_IDS}-object spread", "/", spread, [str(SPREAD_IDS)])),
             ("Redis hits", reader, reader_port, Case(f"{spread_ids:,}-object spread", "/", spread, [str(spread_ids)]))]
    hits = Table(f"Shared tier: hits from Redis (disk tier off, a {REDIS_MEMORY_TIER} memory tier over "
                 f"{spread_ids:,} objects) next to memory hits, {arguments.rounds} round(s) of {arguments.duration} s, "
                 f"medians", ["tier", "case", "connections", "req/s", "p50 ms", "p99 ms", "server CPU µs/req",
                              "from Redis"])
    cpu: dict[tuple[int, str], float] = {}
    for connections in arguments.connections:
        for tier, child, port, case in cases:
            runs, shares = [], []
            for _ in range(arguments.rounds):
                before = get_json(port, "/health")["cache"]
                result = run_wrk(port, case, connections, arguments.duration, [child.pid])
                after = get_json(port, "/health")["cache"]
                if result.errors:
                    problems.append(f"themet, {tier}, {connections} connections: {result.errors} errors")
                if after["misses"] != before["misses"]:
                    problems.append(f"themet, {tier}: {after['misses'] - before['misses']} upstream fetches, "
                                    f"expected none")
                served = sum(after[name] - before[name] for name in ("hits", "redisHits", "misses", "collapsed"))
                shares.append((after["redisHits"] - before["redisHits"]) / max(1, served))
                runs.append(result)
            hits.rows.append([
                tier, case.name, str(connections), f"{statistics.median(r.requests_per_second for r in runs):,.0f}",
                f"{statistics.median(r.p50_ms for r in runs):.2f}", f"{statistics.median(r.p99_ms for r in runs):.2f}",
                f"{statistics.median(r.server_cpu_us for r in runs):.1f}", f"{statistics.median(shares):.0%}"])
            cpu[(connections, tier)] = statistics.median(r.server_cpu_us for r in runs)
        hits.notes.append(f"{connections} connections, CPU per Redis-tier hit against a memory hit's: "
                          f"{against_target(cpu[(connections, 'Redis hits')] / cpu[(connections, 'memory hits')], 2.0, False)}")
    hits.notes.append("from Redis: the share of answers read from Redis (/health cache.redisHits) because the "
                      "memory tier did not hold them; server CPU is themet's alone (Redis runs beside it)")
    for child in (filler, reader):
        supervisor.stop(child)

    misses = Table(f"Shared misses: wrk -t3 -c{SHARED_MISS_CONNECTIONS}, one thread per instance, every thread "
                   f"asking for the same new object IDs in turn; upstream latency {MISS_LATENCY_MS} ms, "
                   f"{arguments.duration} s", ["set-up", "req/s", "p50 ms", "p99 ms", "errors", "keys fetched",
                                               "upstream requests per key"])
    for name, start in SHARED_MISS_STARTS.items():
        count = 3 if name == "three instances" else 1
        members = [start_group_member(supervisor, bins, slow_fake_port, redis_socket, f"bench-miss-{count}:", unpaced)
                   for _ in range(count)]
        ports = [port for _, port in members]
        argv = ["wrk", "-t3", f"-c{SHARED_MISS_CONNECTIONS}", f"-d{arguments.duration}s", "--latency",
                "-s", str(REPO / "Benchmarks/shared_miss.lua"), f"http://{HOST}:{ports[0]}/"]
        environment = {**os.environ, "SHARED_MISS_PORTS": ",".join(map(str, ports)),
                       "SHARED_MISS_START": str(start)}
        done = subprocess.run(argv, capture_output=True, text=True, timeout=arguments.duration + 60, env=environment)
        if done.returncode != 0:
            raise BenchmarkError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
        result = parse_wrk(done.stdout)
        # The keys this run asked for are the objects from `start` up (the other run's are far away).
        counts = [count for path, count in get_json(slow_fake_port, "/__stats")["paths"].items()
                  if start <= int(path.rsplit("/", 1)[1] or 0) < start + 20_000]
        if result.errors:
            problems.append(f"shared misses, {name}: {result.errors} errors")
        misses.rows.append([name, f"{result.requests_per_second:,.0f}", f"{result.p50_ms:.1f}", f"{result.p99_ms:.1f}",
                            str(result.errors), f"{len(counts):,}", f"{sum(counts) / max(1, len(counts)):.3f}"])
        for child, _ in members:
            supervisor.stop(child)
    misses.notes.append("each key is asked for by all three wrk threads, so about a third of the requests name a "
                        "new key; 1.000 upstream requests per key: no key was fetched twice by the group; the "
                        "budget is out of the way (10,000 a second)")
    return [hits, misses]
