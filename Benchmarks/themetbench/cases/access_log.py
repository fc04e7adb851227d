"""The access log's cost on the hit path, and a check that every request got its line."""

import argparse
import statistics
from pathlib import Path

from ..http_client import get_all_ok
from ..processes import Supervisor
from ..report import Table
from ..servers import start_themet
from ..workload import HOT_ID
from ..wrk import Case, WrkResult, run_wrk


def benchmark_logging(supervisor: Supervisor, bins: Path, fake_port: int, arguments: argparse.Namespace,
                      problems: list[str]) -> Table:
    """The access log's cost on the hit path: the hot object at --log-level warning (no access
    lines) next to info with the access log written to a file, in text and in JSON, each run
    alternating so the machine's drift touches both. Checks that every request got its line."""
    hot = f"/objects/{HOT_ID}"
    logs = supervisor.path("access-logs")
    variants = [("warning (no access log)", ["--log-level", "warning"], None),
                ("info, text access log", ["--log-level", "info"], logs / "text.log"),
                ("info, JSON access log", ["--log-level", "info", "--log-format", "json"], logs / "json.log")]
    started = []
    for name, flags, log in variants:
        extra = [*flags, *(["--access-log", str(log)] if log else [])]
        child, port = start_themet(supervisor, bins, fake_port, extra=extra)
        get_all_ok(port, "themet", [hot])
        started.append((name, child, port, log))
    table = Table(f"Access log: hits on {hot}, {arguments.rounds} round(s) of {arguments.duration} s, medians",
                  ["log", "connections", "req/s", "p50 ms", "p99 ms", "server CPU µs/req", "lines written"])
    case = Case("hot object", hot)
    requests = {name: 1 for name, _, _, _ in started}  # the warm-up request
    for connections in arguments.connections:
        results: dict[str, list[WrkResult]] = {}
        for _ in range(arguments.rounds):
            for name, child, port, _ in started:
                result = run_wrk(port, case, connections, arguments.duration, [child.pid])
                if result.errors:
                    problems.append(f"themet ({name}), {connections} connections: {result.errors} errors")
                results.setdefault(name, []).append(result)
                requests[name] += result.requests
        for name, _, _, log in started:
            runs = results[name]
            table.rows.append([name, str(connections), f"{statistics.median(r.requests_per_second for r in runs):,.0f}",
                               f"{statistics.median(r.p50_ms for r in runs):.2f}",
                               f"{statistics.median(r.p99_ms for r in runs):.2f}",
                               f"{statistics.median(r.server_cpu_us for r in runs):.1f}", "-"])
    for name, child, _, log in started:
        supervisor.stop(child)  # SIGTERM: the loops write the lines they hold
        if log is None:
            continue
        with log.open("rb") as lines_file:
            lines = sum(1 for _ in lines_file)
        for row in table.rows:
            if row[0] == name:
                row[6] = f"{lines:,} of ≥ {requests[name]:,}"
        # wrk counts the answers it read; one in flight when it stopped was answered and logged too.
        if lines < requests[name]:
            problems.append(f"themet ({name}): {lines} access lines for at least {requests[name]} requests")
    table.notes.append("the same binary and flags but the log settings, each run in turn; lines written: the "
                       "access log's line count after all the runs, against the requests wrk completed plus the "
                       "warm-up (a request in flight when wrk stopped is answered and logged too)")
    return table
