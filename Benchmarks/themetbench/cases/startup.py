"""Start-up: launch to the first answered GET /health, for themet and nginx."""

import statistics
import time
from pathlib import Path

from ..nginx import launch_nginx
from ..processes import Supervisor
from ..report import Table
from ..servers import launch_themet, wait_until_healthy


def benchmark_startup(supervisor: Supervisor, bins: Path, fake_port: int, runs: int) -> Table:
    """Launch to the first answered GET /health, `runs` times per server, each from a fresh start."""
    table = Table(f"Start-up: launch to the first answered GET /health (polled every 1 ms), {runs} run(s)",
                  ["server", "median ms", "min ms", "max ms"])
    # Each server binds port 0: themet announces its port, nginx inherits a socket bound for it.
    launchers = {
        "themet": lambda: launch_themet(supervisor, bins, fake_port),
        "nginx": lambda: launch_nginx(supervisor, fake_port),
    }
    for server, launch in launchers.items():
        times = []
        for _ in range(runs):
            started = time.monotonic()
            child, port = launch()
            times.append((wait_until_healthy(child, port) - started) * 1000)
            supervisor.stop(child)
        table.rows.append([server, f"{statistics.median(times):.1f}", f"{min(times):.1f}", f"{max(times):.1f}"])
    return table
