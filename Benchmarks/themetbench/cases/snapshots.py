"""Snapshots: `themet export` of a cache while the server on it answers hits from it, and
`themet import` of that snapshot into an empty data directory, against issue 27's targets."""

import argparse
import os
import subprocess
import threading
import time
from pathlib import Path

from ..processes import Child, Supervisor
from ..report import Table
from ..wrk import WrkResult, run_wrk
from .disk_tier import spread_case

# Issue 27's targets: 100,000 records exported in at most 10 s while serving, 50,000 imported a second.
EXPORT_TARGET = 10_000
IMPORT_TARGET = 50_000
# Connections of the hits the export runs beside.
SERVING_CONNECTIONS = 16


def timed(argv: list[str]) -> tuple[float, float, float, str]:
    """Runs `argv` to its end: wall seconds, CPU seconds (user and system), its maximum RSS in
    MiB, and what it printed."""
    started = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {child.returncode}: {output.strip()}")
    return time.monotonic() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output.strip()


def benchmark_snapshots(supervisor: Supervisor, bins: Path, themet: Child, port: int, records: int,
                        arguments: argparse.Namespace, problems: list[str]) -> Table:
    """Exports `themet`'s cache (holding `records` records) while wrk hits it over the same
    records, then imports the snapshot into a new data directory."""
    table = Table(f"Snapshots of {records:,} cached records: themet export while themet serves hits "
                  f"({SERVING_CONNECTIONS} connections), themet import into an empty data directory",
                  ["step", "seconds", "records/s", "CPU s", "max RSS MiB", "target"])
    snapshot = supervisor.path("snapshot") / "cache.snapshot"
    serving: list[WrkResult] = []
    # The hits run for longer than the export takes; the export starts once they do.
    hits = threading.Thread(target=lambda: serving.append(
        run_wrk(port, spread_case(records), SERVING_CONNECTIONS, max(5, arguments.duration), [themet.pid])))
    hits.start()
    time.sleep(0.5)
    seconds, cpu, rss, _ = timed([str(bins / "themet"), "export", str(snapshot), "--data-dir", str(themet.data)])
    hits.join()
    rate = records / seconds
    table.rows.append(["export, while serving", f"{seconds:.2f}", f"{rate:,.0f}", f"{cpu:.2f}", f"{rss:.1f}",
                       f"≥ {EXPORT_TARGET:,}/s: {'met' if rate >= EXPORT_TARGET else 'missed'}"])
    if serving and serving[0].errors:
        problems.append(f"themet: {serving[0].errors} errors while a snapshot was exported")
    if serving:
        table.notes.append(f"the hits beside the export: {serving[0].requests_per_second:,.0f} req/s, "
                           f"p99 {serving[0].p99_ms:.2f} ms")

    target = supervisor.path("themet-data-imported")  # empty
    seconds, cpu, rss, output = timed([str(bins / "themet"), "import", str(snapshot), "--data-dir", str(target)])
    rate = records / seconds
    table.rows.append(["import, empty directory", f"{seconds:.2f}", f"{rate:,.0f}", f"{cpu:.2f}", f"{rss:.1f}",
                       f"≥ {IMPORT_TARGET:,}/s: {'met' if rate >= IMPORT_TARGET else 'missed'}"])
    if f"{records} stored" not in output:
        problems.append(f"themet import: {output!r} (expected {records} stored)")
    snapshot.unlink()
    return table
