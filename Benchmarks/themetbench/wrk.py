"""wrk: one workload (Case), one run, and what it printed."""

import re
import resource
import subprocess
from dataclasses import dataclass, field

from . import BenchmarkError
from .proc import cpu_seconds
from .workload import HOST, LOOPS


@dataclass
class Case:
    """One wrk workload: a path (or a Lua script that picks paths) and whether nginx can serve it."""

    name: str
    path: str
    script: list[str] = field(default_factory=list)  # wrk's -s SCRIPT
    script_arguments: list[str] = field(default_factory=list)
    nginx: bool = True
    connections: list[int] | None = None  # only these connection counts; None: all of them
    nginx_path: str | None = None  # what nginx is asked instead of `path` (the same bytes another way)

    def path_for(self, server: str) -> str:
        """The path `server` is asked."""
        return self.nginx_path if server == "nginx" and self.nginx_path else self.path


@dataclass
class WrkResult:
    """What one wrk run reported."""

    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: int
    # The server's user + system CPU time per request during the run, all its processes and
    # threads (nginx: its workers). Less noisy than req/s on a machine wrk shares.
    server_cpu_us: float = 0.0
    # wrk's own user + system CPU time per request. On loopback the kernel charges the TCP work of
    # both ends (receiving, acknowledging, paced sending) to whichever process is running, so the
    # split between server and client depends on the server's timing, and only the sum is the
    # machine's cost of a request.
    client_cpu_us: float = 0.0

    @property
    def errors(self) -> int:
        return self.non_2xx + self.socket_errors


def milliseconds(value: str, unit: str) -> float:
    """wrk's latency text (us, ms, s, m, h) in milliseconds."""
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[unit]


def parse_wrk(output: str) -> WrkResult:
    """Requests/sec, the 50% and 99% latencies, the request count and the errors wrk printed."""
    def number(pattern: str, default: str | None = None) -> str:
        match = re.search(pattern, output, re.MULTILINE)
        if match:
            return match.group(1)
        if default is None:
            raise BenchmarkError(f"wrk output lacks /{pattern}/:\n{output}")
        return default

    def percentile(label: str) -> float:
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s|m|h)\s*$", output, re.MULTILINE)
        if not match:
            raise BenchmarkError(f"wrk output lacks the {label}% latency:\n{output}")
        return milliseconds(*match.groups())

    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return WrkResult(
        requests_per_second=float(number(r"^Requests/sec:\s+([\d.]+)")),
        p50_ms=percentile("50"),
        p99_ms=percentile("99"),
        requests=int(number(r"^\s+(\d+) requests in ")),
        non_2xx=int(number(r"Non-2xx or 3xx responses: (\d+)", "0")),
        socket_errors=sum(int(count) for count in sockets.groups()) if sockets else 0,
    )


def children_cpu_seconds() -> float:
    """User + system CPU time of the children this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wrk(port: int, case: Case, connections: int, duration: int, pids: list[int], path: str | None = None
            ) -> WrkResult:
    """One `wrk -t2 -cC -dDs --latency` run of `case` (at `path` instead of its own, if given)
    against the server on `port`, whose processes are `pids` (for its CPU time). wrk's own CPU
    time is what the children waited for gained during the run: wrk is the only child reaped then."""
    path = path or case.path
    argv = ["wrk", f"-t{LOOPS}", f"-c{connections}", f"-d{duration}s", "--latency"]
    if case.script:
        argv += [*case.script, f"http://{HOST}:{port}{path}", "--", *case.script_arguments]
    else:
        argv.append(f"http://{HOST}:{port}{path}")
    cpu_before = cpu_seconds(pids)
    client_before = children_cpu_seconds()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
    client_after = children_cpu_seconds()
    cpu_after = cpu_seconds(pids)
    if done.returncode != 0:
        raise BenchmarkError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    result = parse_wrk(done.stdout)
    if result.requests:
        result.server_cpu_us = (cpu_after - cpu_before) / result.requests * 1_000_000
        result.client_cpu_us = (client_after - client_before) / result.requests * 1_000_000
    return result
