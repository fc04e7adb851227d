"""The hit path in one process, without sockets (themet-hitbench): CPU per request steady to a
few percent, where the wrk cases vary by ten or more; with --against, this build's and the
baseline's in turn."""

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

from .. import BenchmarkError
from ..report import Table
from ..workload import REPO

HITBENCH = "themet-hitbench"
RUN_TIMEOUT_SECONDS = 600


def has_hitbench(bins: Path) -> bool:
    """Whether the build in `bins` has the tool (builds before it do not)."""
    return os.access(bins / HITBENCH, os.X_OK)


def run_hitbench(bins: Path, requests: int, rounds: int) -> dict[str, list[float]]:
    """One run of the tool in `bins`: each case's thread CPU nanoseconds per request, one figure a round."""
    argv = [str(bins / HITBENCH), "--json", "--fixtures", str(REPO / "Fixtures"), "--requests", str(requests),
            "--rounds", str(rounds)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as error:
        raise BenchmarkError(f"{HITBENCH} ran over {RUN_TIMEOUT_SECONDS} s") from error
    if done.returncode != 0:
        raise BenchmarkError(f"{HITBENCH} in {bins} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return {case["case"]: case["cpuNanosecondsPerRequest"] for case in map(json.loads, done.stdout.splitlines())}


def benchmark_hit_path(bins: Path, baseline: Path | None, arguments: argparse.Namespace) -> Table:
    """The tool's cases over `arguments.rounds` runs of 3 rounds each (the least and the median
    of the rounds); with a baseline that has the tool, its runs alternate with this build's."""
    if not has_hitbench(bins):
        raise BenchmarkError(f"no {HITBENCH} in {bins}: build with `swift build -c release`")
    requests = 20_000 if arguments.smoke else 200_000
    builds = {"themet": bins}
    if baseline is not None and has_hitbench(baseline):
        builds["baseline"] = baseline
    figures: dict[str, dict[str, list[float]]] = {build: {} for build in builds}
    for _ in range(arguments.rounds):
        for build, directory in builds.items():
            for case, values in run_hitbench(directory, requests, 3).items():
                figures[build].setdefault(case, []).extend(values)
    columns = ["case", "CPU ns/request, least", "median"]
    if "baseline" in builds:
        columns += ["baseline least", "median", "themet/baseline (least)"]
    table = Table(f"Hit path in one process, without sockets (themet-hitbench): {requests:,} requests per case "
                  f"and round, {arguments.rounds * 3} rounds", columns)
    for case, values in figures["themet"].items():
        row = [case, f"{min(values):,.0f}", f"{statistics.median(values):,.0f}"]
        if "baseline" in builds:
            base = figures["baseline"].get(case)
            row += ([f"{min(base):,.0f}", f"{statistics.median(base):,.0f}", f"{min(values) / min(base):.3f}"]
                    if base else ["n/a"] * 3)
        table.rows.append(row)
    table.notes.append("each request's head parsed, answered from memory by the core (the disk case: from the disk "
                       "tier under 1 MiB of memory, read on the thread as a loop reads it), passed through the response "
                       "layers and encoded as a loop writes it, on one thread; the read, the writev and the loop's "
                       "wake-ups are left out, and so are wrk and the scheduler: compare builds here to a few "
                       "percent; least: the least of the rounds, as a neighbour's burst on this virtual machine only ever "
                       "adds to a thread's CPU time")
    if baseline is not None and "baseline" not in builds:
        table.notes.append(f"the baseline has no {HITBENCH}")
    return table
